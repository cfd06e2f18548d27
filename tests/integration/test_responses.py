"""POST /v1/responses through `strata serve` with SmolLM2, driven by the `openai` package:
text whole and streamed (the event order and sequence numbers, the same greedy text),
max_output_tokens, forced function calls and their output sent back, previous_response_id
continuation (the follow-up's prompt is the whole conversation), store false, an unknown
previous_response_id, stored responses read back (retrieve, input_items with the SDK's cursor
pages) and deleted, and the 400s of inputs and fields that are not supported."""
import json

import openai
import pydantic
import pytest

from conftest import request

TIME_TOOL = {"type": "function", "name": "get_time", "description": "The time in a zone",
             "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]}}
QUESTION = "Write one sentence about the sea."


class Time(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    zone: str


def create(smol, **kw):
    kw.setdefault("input", QUESTION)
    kw.setdefault("max_output_tokens", 24)
    return smol.client().responses.create(model=smol.model, temperature=0, **kw)


def token_count(smol, messages):
    status, body = request(smol.url + "/tokenize", {"messages": messages})
    assert status == 200, body
    return json.loads(body)["count"]


def test_text_non_streamed(smol):
    r = create(smol)
    assert r.object == "response" and r.id.startswith("resp_") and r.model == smol.model
    assert r.status in ("completed", "incomplete")
    assert [item.type for item in r.output] == ["message"]
    message = r.output[0]
    assert message.role == "assistant" and message.id.startswith("msg_")
    assert [part.type for part in message.content] == ["output_text"] and message.content[0].annotations == []
    assert r.output_text == message.content[0].text and r.output_text.strip()
    assert r.usage.input_tokens == token_count(smol, [{"role": "user", "content": QUESTION}])
    assert r.usage.total_tokens == r.usage.input_tokens + r.usage.output_tokens
    assert r.temperature == 0 and r.max_output_tokens == 24 and r.store is True and r.tools == []


def test_streamed_events(smol):
    whole = create(smol)
    events = list(create(smol, stream=True))
    types = [e.type for e in events]
    num_deltas = len(types) - 8
    assert types == (["response.created", "response.in_progress", "response.output_item.added",
                      "response.content_part.added"] + ["response.output_text.delta"] * num_deltas +
                     ["response.output_text.done", "response.content_part.done", "response.output_item.done",
                      "response.completed" if whole.status == "completed" else "response.incomplete"])
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert events[0].response.status == "in_progress" and events[0].response.output == []
    deltas = [e for e in events if e.type == "response.output_text.delta"]
    item_id = events[2].item.id
    assert all(d.item_id == item_id and d.output_index == 0 and d.content_index == 0 for d in deltas)
    assert "".join(d.delta for d in deltas) == whole.output_text
    assert events[-4].text == whole.output_text
    final = events[-1].response
    assert final.output_text == whole.output_text and final.status == whole.status
    assert final.usage.output_tokens == whole.usage.output_tokens


def test_stream_helper(smol):
    # The helper needs response.completed: an answer that ends before max_output_tokens.
    question = "What is the capital of France?"
    whole = create(smol, input=question, max_output_tokens=100)
    assert whole.status == "completed"
    with smol.client().responses.stream(model=smol.model, input=question, max_output_tokens=100,
                                        temperature=0) as stream:
        text = "".join(e.delta for e in stream if e.type == "response.output_text.delta")
        final = stream.get_final_response()
    assert text == whole.output_text == final.output_text
    assert final.status == "completed" and final.incomplete_details is None


def test_max_output_tokens(smol):
    r = create(smol, max_output_tokens=3)
    assert r.status == "incomplete" and r.incomplete_details.reason == "max_output_tokens"
    assert r.usage.output_tokens == 3
    assert r.output[0].status == "incomplete"


def test_forced_function_call_and_its_output(smol):
    r = create(smol, input="What time is it in Tokyo?", tools=[TIME_TOOL], max_output_tokens=100,
               tool_choice={"type": "function", "name": "get_time"})
    assert r.status == "completed"
    assert [item.type for item in r.output] == ["function_call"]
    call = r.output[0]
    assert call.name == "get_time" and call.call_id.startswith("call_") and call.id.startswith("fc_")
    Time.model_validate_json(call.arguments)
    follow = create(smol, previous_response_id=r.id, tools=[TIME_TOOL],
                    input=[{"type": "function_call_output", "call_id": call.call_id, "output": "09:30"}])
    assert follow.output[0].type == "message" and follow.previous_response_id == r.id
    conversation = [{"role": "user", "content": "What time is it in Tokyo?"},
                    {"role": "assistant", "content": "", "tool_calls": [{"id": call.call_id, "type": "function",
                     "function": {"name": "get_time", "arguments": call.arguments}}]},
                    {"role": "tool", "tool_call_id": call.call_id, "content": "09:30"}]
    status, body = request(smol.url + "/tokenize", {"messages": conversation, "tools": [
        {"type": "function", "function": {k: v for k, v in TIME_TOOL.items() if k != "type"}}]})
    assert follow.usage.input_tokens == json.loads(body)["count"]


def test_required_tool_choice_streamed(smol):
    events = list(create(smol, input="What time is it in Tokyo?", tools=[TIME_TOOL], max_output_tokens=100,
                         tool_choice="required", parallel_tool_calls=False, stream=True))
    types = [e.type for e in events]
    num_deltas = types.count("response.function_call_arguments.delta")
    assert num_deltas >= 2  # the arguments stream as they are written
    assert types == ["response.created", "response.in_progress", "response.output_item.added",
                     *["response.function_call_arguments.delta"] * num_deltas, "response.function_call_arguments.done",
                     "response.output_item.done", "response.completed"]
    done = events[-2].item
    assert done.type == "function_call" and done.name == "get_time" and done.status == "completed"
    assert "".join(e.delta for e in events[3:3 + num_deltas]) == events[-3].arguments == done.arguments
    Time.model_validate_json(done.arguments)
    assert events[-1].response.output[0].call_id == done.call_id


def test_previous_response_id_continues_the_conversation(smol):
    first = create(smol, input="My name is Ada.", instructions="Answer in one short sentence.")
    second = create(smol, input=[{"role": "user", "content": [{"type": "input_text", "text": "What is my name?"}]}],
                    previous_response_id=first.id)
    assert second.previous_response_id == first.id and second.instructions is None
    # The instructions are not carried over; the first answer is.
    assert second.usage.input_tokens == token_count(smol, [
        {"role": "user", "content": "My name is Ada."}, {"role": "assistant", "content": first.output_text},
        {"role": "user", "content": "What is my name?"}])
    third = create(smol, input="And again?", previous_response_id=second.id)
    assert third.usage.input_tokens == token_count(smol, [
        {"role": "user", "content": "My name is Ada."}, {"role": "assistant", "content": first.output_text},
        {"role": "user", "content": "What is my name?"}, {"role": "assistant", "content": second.output_text},
        {"role": "user", "content": "And again?"}])


def test_streamed_answer_is_stored_too(smol):
    events = list(create(smol, input="My name is Ada.", stream=True))
    first = events[-1].response
    second = create(smol, input="What is my name?", previous_response_id=first.id)
    assert second.usage.input_tokens == token_count(smol, [
        {"role": "user", "content": "My name is Ada."}, {"role": "assistant", "content": first.output_text},
        {"role": "user", "content": "What is my name?"}])


def test_unknown_and_unstored_previous_response_id(smol):
    with pytest.raises(openai.BadRequestError) as e:
        create(smol, previous_response_id="resp_unknown")
    assert e.value.code == "previous_response_not_found" and e.value.param == "previous_response_id"
    assert "resp_unknown" in e.value.message
    unstored = create(smol, store=False)
    assert unstored.store is False
    with pytest.raises(openai.BadRequestError) as e:
        create(smol, previous_response_id=unstored.id)
    assert e.value.code == "previous_response_not_found"


def test_retrieve_answers_the_create_object(smol):
    client = smol.client()
    created = create(smol, instructions="Answer briefly.", metadata={"topic": "sea"})
    assert client.responses.retrieve(created.id).model_dump() == created.model_dump()
    events = list(create(smol, input="My name is Ada.", stream=True))
    streamed = events[-1].response
    assert client.responses.retrieve(streamed.id).model_dump() == streamed.model_dump()


def test_input_items_in_cursor_pages(smol):
    client = smol.client()
    sent = [{"role": "user", "content": "My name is Ada."}, {"role": "assistant", "content": "Hello Ada."},
            {"role": "user", "content": [{"type": "input_text", "text": "What is my name?"}]}]
    created = create(smol, input=sent)
    newest_first = client.responses.input_items.list(created.id)
    assert [(item.type, item.role, item.content[0].text) for item in newest_first.data] == [
        ("message", "user", "What is my name?"), ("message", "assistant", "Hello Ada."),
        ("message", "user", "My name is Ada.")]
    assert all(item.id.startswith("msg_") and item.status == "completed" for item in newest_first.data)
    assert newest_first.has_more is False
    first_page = client.responses.input_items.list(created.id, order="asc", limit=2)
    assert [item.id for item in first_page.data] == [item.id for item in reversed(newest_first.data)][:2]
    assert first_page.has_next_page()
    # The SDK follows the cursor (after = the last id) through every page.
    walked = list(client.responses.input_items.list(created.id, order="asc", limit=1))
    assert [item.id for item in walked] == [item.id for item in reversed(newest_first.data)]
    with pytest.raises(openai.BadRequestError) as e:
        client.responses.input_items.list(created.id, limit=0)
    assert e.value.param == "limit"


def test_delete_and_unstored_responses_are_not_found(smol):
    client = smol.client()
    created = create(smol)
    status, text = request(smol.url + "/v1/responses/" + created.id, method="DELETE")
    assert status == 200 and json.loads(text) == {"id": created.id, "object": "response", "deleted": True}
    for read in (client.responses.retrieve, client.responses.delete, client.responses.input_items.list):
        with pytest.raises(openai.NotFoundError) as e:
            read(created.id)
        assert created.id in e.value.message
    with pytest.raises(openai.BadRequestError) as e:
        create(smol, input="Again?", previous_response_id=created.id)
    assert e.value.code == "previous_response_not_found"
    kept = create(smol)
    assert client.responses.delete(kept.id) is None
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(kept.id)
    unstored = create(smol, store=False)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(unstored.id)


def test_background_is_refused_by_name(smol):
    with pytest.raises(openai.BadRequestError) as e:
        create(smol, background=True)
    assert e.value.param == "background" and "background responses are not supported" in e.value.message
    created = create(smol)
    with pytest.raises(openai.BadRequestError) as e:
        smol.client().responses.cancel(created.id)
    assert "background=true" in e.value.message


@pytest.mark.parametrize("body,field", [
    ({}, "input"),
    ({"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "data:image/png;base64,AAAA"}]}]},
     "takes text only"),
    ({"input": [{"role": "user", "content": [{"type": "input_file", "file_id": "file_1"}]}]}, "input_file"),
    ({"input": "hi", "bogus_field": 1}, "bogus_field"),
    ({"input": "hi", "tools": [{"type": "web_search"}]}, "web_search"),
    ({"input": "hi", "tool_choice": {"type": "function", "name": "nope"}, "tools": [TIME_TOOL]}, "nope"),
    ({"input": "hi", "background": True}, "background"),
    ({"input": "hi", "truncation": "auto"}, "truncation"),
    ({"input": [{"type": "item_reference", "id": "x"}]}, "item_reference"),
    ({"input": "hi", "conversation": "conv_1"}, "conversation"),
    ({"input": "hi", "max_output_tokens": 0}, "max_tokens"),
])
def test_bad_requests(smol, body, field):
    status, text = request(smol.url + "/v1/responses", body)
    assert status == 400, text
    error = json.loads(text)["error"]
    assert error["type"] == "invalid_request_error" and field in error["message"], error
