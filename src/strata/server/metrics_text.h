// /metrics: the engine's counters, gauges and latency histograms in the Prometheus text
// format, under vLLM's metric names with the strata: prefix, labelled with the model name;
// then those gateways and autoscalers read, exactly as vLLM exports them (vllm: prefix).
#pragma once

#include <span>
#include <string>

#include "strata/engine/engine_stats.h"

namespace strata::server {

std::string render_metrics(const EngineStatsSnapshot& stats, const std::string& model_name);
// Data-parallel replicas: the strata: names carry their sums, the vllm: names one series per
// replica, labelled engine="i" as vLLM labels its data-parallel engines.
std::string render_metrics(std::span<const EngineStatsSnapshot> replicas, const std::string& model_name);

}  // namespace strata::server
