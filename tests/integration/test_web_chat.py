"""The chat page in a real headless Chromium (selenium) against `strata serve` with SmolLM2:
an answer streams in and shows its speed, Stop ends a long answer (the server cancels it and
stays healthy), conversations survive a reload, the Markdown renderer escapes model output,
thinking shows collapsed, the API key field and the model picker (LoRA adapters too) work; with
the Qwen3.5 vision fixture an attached PNG is previewed, sent as an image_url part (the prompt
counts its image tokens) and kept in the conversation, and the attach button shows only for a
model that takes images. Screenshots go to a temp folder the test prints. Skips only when
chromium is not installed."""
import base64
import json
import re
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from conftest import LOCAL_FIXTURES, get, request

CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(CHROMIUM is None or CHROMEDRIVER is None,
                                reason="chromium and chromium-driver are not installed (scripts/setup.sh installs them)")

STATS = re.compile(r"^\d+ tokens · [\d.]+ tokens/s · \d+ prompt tokens · \d+ cached prompt tokens$")


@pytest.fixture(scope="module")
def shots():
    folder = Path(tempfile.mkdtemp(prefix="strata-web-chat-"))
    print(f"\nscreenshots: {folder}")
    return folder


@pytest.fixture(scope="module")
def browser(shots):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1200,900",
                f"--user-data-dir={shots / 'profile'}"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


def wait_for(condition, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def set_field(driver, element_id, text):
    field = driver.find_element("id", element_id)
    field.clear()
    field.send_keys(text)


def open_page(driver, url):
    driver.get(url + "/")
    wait_for(lambda: driver.execute_script("return document.querySelectorAll('#model option').length"), 10,
             "the model list")


def last_answer(driver):
    return driver.find_elements("css selector", ".message.assistant")[-1]


def ask(driver, prompt, max_tokens, temperature):
    set_field(driver, "temperature", str(temperature))
    set_field(driver, "max-tokens", str(max_tokens))
    set_field(driver, "prompt", prompt)
    driver.find_element("id", "send").click()
    wait_for(lambda: driver.find_elements("css selector", ".message.assistant"), 5, "the answer to start")


def test_answer_streams_with_its_speed(smol, browser, shots):
    open_page(browser, smol.url)
    assert browser.find_element("id", "model").get_attribute("value") == smol.model
    assert not browser.find_element("id", "attach").is_displayed()  # SmolLM2 takes text only
    ask(browser, "What is the capital of France?", max_tokens=64, temperature=0)
    wait_for(lambda: last_answer(browser).get_attribute("data-state") == "done", 30, "the answer to finish")
    answer = last_answer(browser)
    browser.save_screenshot(str(shots / "1-answer.png"))
    assert "Paris" in answer.find_element("css selector", ".content").text
    stats = answer.find_element("css selector", ".stats").text
    assert STATS.match(stats), stats
    assert browser.find_element("id", "send").is_enabled()
    assert not browser.find_element("id", "stop").is_enabled()
    # The next turn resends the conversation: its first turn's full 16-token blocks come from the prefix cache.
    first_prompt_tokens = int(re.search(r"(\d+) prompt tokens", stats).group(1))
    ask(browser, "And of Germany?", max_tokens=32, temperature=0)
    wait_for(lambda: last_answer(browser).get_attribute("data-state") == "done", 30, "the second answer")
    cached = int(re.search(r"(\d+) cached prompt tokens", last_answer(browser).text).group(1))
    assert cached == first_prompt_tokens // 16 * 16 > 0


def test_stop_ends_a_long_answer(smol, browser, shots):
    open_page(browser, smol.url)
    browser.find_element("id", "new-chat").click()
    aborted = smol.metrics().get("strata:request_aborted_total", 0)
    ask(browser, "Write a very long story about a dragon who travels around the world, with many chapters.",
        max_tokens=900, temperature=0)  # greedy, it rambles on to max_tokens
    content = lambda: last_answer(browser).find_element("css selector", ".content").text
    wait_for(lambda: len(content()) > 200, 30, "the long answer to be under way")
    assert last_answer(browser).get_attribute("data-state") == "streaming"
    browser.find_element("id", "stop").click()
    wait_for(lambda: last_answer(browser).get_attribute("data-state") == "stopped", 5, "the answer to stop")
    stopped_text = content()
    time.sleep(1.0)
    assert content() == stopped_text  # nothing arrives after Stop
    browser.save_screenshot(str(shots / "2-stopped.png"))
    assert last_answer(browser).find_element("css selector", ".stats").text.endswith("· stopped")
    wait_for(lambda: smol.metrics().get("strata:request_aborted_total", 0) == aborted + 1, 5,
             "the server to cancel the request")
    assert get(smol.url + "/health")[0] == 200
    assert smol.metrics()["strata:num_requests_running"] == 0


def test_conversations_survive_a_reload(smol, browser, shots):
    open_page(browser, smol.url)  # a fresh load: the list comes from localStorage
    titles = [li.text.rstrip("×").strip() for li in browser.find_elements("css selector", "#conversations li")]
    assert len(titles) == 2
    assert titles[-1] == "What is the capital of France?"
    assert titles[0].startswith("Write a very long story about a dragon")
    browser.find_elements("css selector", "#conversations li .title")[-1].click()
    answers = browser.find_elements("css selector", ".message.assistant")
    assert len(answers) == 2
    assert "Paris" in answers[0].find_element("css selector", ".content").text
    assert STATS.match(answers[0].find_element("css selector", ".stats").text)
    browser.save_screenshot(str(shots / "3-reloaded.png"))
    browser.find_elements("css selector", "#conversations li .delete")[0].click()
    assert len(browser.find_elements("css selector", "#conversations li")) == 1
    open_page(browser, smol.url)
    assert len(browser.find_elements("css selector", "#conversations li")) == 1


def render(browser, text):
    return browser.execute_async_script(
        "const [text, done] = arguments; import('/ui/markdown.js').then((m) => done(m.renderMarkdown(text)));", text)


def test_markdown_renders_and_escapes(smol, browser):
    open_page(browser, smol.url)
    assert render(browser, "Hi **there** and `a<b>`\n\n- one\n- two *x*\n\n1. first") == (
        "<p>Hi <strong>there</strong> and <code>a&lt;b&gt;</code></p>\n<ul><li>one</li><li>two <em>x</em></li></ul>\n"
        "<ol><li>first</li></ol>")
    assert render(browser, "```python\nif a < b:\n    print('<script>')\n```\nafter") == (
        "<pre><code class=\"language-python\">if a &lt; b:\n    print(&#39;&lt;script&gt;&#39;)</code></pre>\n<p>after</p>")
    assert render(browser, "<img src=x onerror=alert(1)> [a](javascript:alert(1))") == (
        "<p>&lt;img src=x onerror=alert(1)&gt; [a](javascript:alert(1))</p>")
    assert render(browser, "```\nstill streaming") == "<pre><code>still streaming</code></pre>"
    assert render(browser, "# Title\nsee [docs](https://example.com/a)") == (
        '<h1>Title</h1>\n<p>see <a href="https://example.com/a" target="_blank" rel="noopener noreferrer">docs</a></p>')


def test_reasoning_is_shown_collapsed(smol, browser):
    open_page(browser, smol.url)
    script = """const [done] = arguments;
      import('/ui/message_view.js').then((v) => done([
        {role: 'assistant', content: 'It is 391.', reasoning: '17 * 23 = 391', state: 'done'},
        {role: 'assistant', content: 'No thinking.', reasoning: '', state: 'done'}].map((m) => {
          const el = v.messageElement(m), details = el.querySelector('details.reasoning');
          return [details.open, details.hidden, details.textContent, el.querySelector('.content').innerHTML];
        })));"""
    assert browser.execute_async_script(script) == [
        [False, False, "Thinking17 * 23 = 391", "<p>It is 391.</p>"],
        [False, True, "Thinking", "<p>No thinking.</p>"]]


def test_api_key_field_lets_the_page_list_models(tiny_with_key, browser, shots):
    browser.get(tiny_with_key.url + "/")
    error = browser.find_element("id", "error")
    wait_for(lambda: error.is_displayed(), 10, "the 401 to be shown")
    assert error.text.startswith("Could not list the models (401: missing or wrong API key")
    set_field(browser, "api-key", "sekret")
    browser.find_element("id", "temperature").click()  # leaving the field fires its change event
    wait_for(lambda: browser.execute_script("return document.querySelectorAll('#model option').length"), 10,
             "the model list")
    assert browser.find_element("id", "model").get_attribute("value") == "tiny-qwen"
    assert not error.is_displayed()
    browser.save_screenshot(str(shots / "4-api-key.png"))


def test_model_picker_lists_lora_adapters(tiny_lora, browser):
    open_page(browser, tiny_lora.url)
    options = browser.execute_script(
        "return [...document.querySelectorAll('#model option')].map((o) => [o.value, o.textContent]);")
    assert options == [[tiny_lora.model, tiny_lora.model], ["all_r8", f"all_r8 (LoRA of {tiny_lora.model})"],
                       ["attn_r4", f"attn_r4 (LoRA of {tiny_lora.model})"]]


def test_image_is_attached_previewed_and_sent(vision, browser, shots):
    image = LOCAL_FIXTURES / "hf" / "qwen3_5_vision" / "image_0.png"
    open_page(browser, vision.url)
    assert browser.find_element("id", "attach").is_displayed()
    browser.find_element("id", "image-input").send_keys(str(image))
    preview = wait_for(lambda: browser.find_elements("css selector", "#attachments img"), 5, "the preview")
    url = "data:image/png;base64," + base64.b64encode(image.read_bytes()).decode()
    assert [img.get_attribute("src") for img in preview] == [url]
    assert browser.find_element("id", "attachments").is_displayed()
    browser.save_screenshot(str(shots / "5-image-attached.png"))
    ask(browser, "What is in it?", max_tokens=4, temperature=0)
    wait_for(lambda: last_answer(browser).get_attribute("data-state") == "done", 60, "the answer to the image")
    assert not browser.find_elements("css selector", "#attachments img")  # sending takes the images
    shown = browser.find_elements("css selector", ".message.user .images img")
    assert [img.get_attribute("src") for img in shown] == [url]
    assert browser.execute_script("return arguments[0].naturalWidth", shown[0]) == 45  # the PNG decoded
    browser.save_screenshot(str(shots / "6-image-answered.png"))
    # The same request through the API: the page's prompt holds the image's tokens.
    content = [{"type": "text", "text": "What is in it?"}, {"type": "image_url", "image_url": {"url": url}}]
    status, body = request(vision.url + "/v1/chat/completions", {"messages": [{"role": "user", "content": content}],
                                                                 "max_tokens": 4, "temperature": 0})
    assert status == 200, body
    expected = json.loads(body)
    status, body = request(vision.url + "/tokenize", {"messages": [{"role": "user", "content": "What is in it?"}]})
    assert expected["usage"]["prompt_tokens"] > json.loads(body)["count"]  # image tokens counted
    stats = last_answer(browser).find_element("css selector", ".stats").text
    assert f"{expected['usage']['prompt_tokens']} prompt tokens" in stats, stats
    assert last_answer(browser).find_element("css selector", ".content").text == \
        expected["choices"][0]["message"]["content"].strip()
    open_page(browser, vision.url)  # kept in localStorage with the rest
    browser.find_elements("css selector", "#conversations li .title")[0].click()
    assert [img.get_attribute("src") for img in browser.find_elements("css selector", ".message.user .images img")] \
        == [url]
