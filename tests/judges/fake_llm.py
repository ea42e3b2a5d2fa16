"""A small OpenAI-compatible chat-completions server on loopback, for the judge tests.

It answers from markers in the prompt (so each test decides per passage what the
"model" does): ``GRADE=n`` answers {"grade": n}, ``DIGIT`` a lone digit, ``MALFORMED``
prose, ``SEVEN`` grade 7, ``EMPTY`` nothing, ``LONG`` a very long answer, ``REFUSE`` a
refusal, ``RATE429`` a 429 with ``Retry-After`` on the first call, ``ALWAYS429`` a 429
every time, ``FLAKY500`` a 500 on the first call, ``ALWAYS500`` a 500 every time,
``SLOW`` an answer later than the client waits. ``delay`` makes every answer wait that
long (a slow endpoint); ``hang`` makes every request wait without answering (an endpoint
that accepts connections and never replies). Without a marker the grade is the
passage's length modulo 4 (deterministic). A nugget prompt gets nuggets citing its
passages (``nuggets``); an answer's nugget assignment and a citation's support get the
levels ``assign`` and ``support`` read off the texts (``reply`` of each request keeps
what was answered). A wrong key gets 401, another model 404.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "fake-judge"
# How often a serving thread looks for its shutdown: the default (0.5 s) made every test
# that stopped a stand-in server wait half a second in its teardown.
POLL_SECONDS = 0.01
RETRY_AFTER = "2"  # seconds; the tests' sleep records it instead of sleeping


def serving_thread(httpd) -> threading.Thread:
    """A daemon thread (not started) serving ``httpd`` until ``httpd.shutdown()``."""
    return threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": POLL_SECONDS}, daemon=True
    )


class FakeLLM:
    def __init__(self, key: str, slow_seconds: float = 1.0, delay: float = 0.0):
        self.key = key
        self.slow_seconds = slow_seconds
        self.delay = delay
        self.hang = threading.Event()
        self.requests: list[dict] = []
        self.seen: Counter = Counter()
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    server.handle(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = serving_thread(self.httpd)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> FakeLLM:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def calls_for(self, marker: str) -> int:
        return sum(1 for r in self.requests if marker in r["prompt"])

    def _send(self, handler, status: int, body: dict | None, headers: dict | None = None):
        data = json.dumps(body or {}).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)

    def _error(self, handler, record: dict, status: int, message: str, headers=None):
        record["status"] = status
        self._send(handler, status, {"error": {"message": message, "type": "error"}}, headers)

    def handle(self, handler) -> None:
        length = int(handler.headers.get("Content-Length", 0))
        request = json.loads(handler.rfile.read(length))
        prompt = request["messages"][-1]["content"]
        with self.lock:
            self.seen[prompt] += 1
            attempt = self.seen[prompt]
            record = {"status": 200}
            self.requests.append(record)
            record.update(
                {
                    "prompt": prompt,
                    "model": request.get("model"),
                    "path": handler.path,
                    "auth": handler.headers.get("Authorization", ""),
                    "request": request,
                }
            )
        if handler.headers.get("Authorization") != f"Bearer {self.key}":
            # Like some providers, echo part of the key back: Assay must not keep it.
            sent = handler.headers.get("Authorization", "")[7:]
            return self._error(handler, record, 401, f"Incorrect API key provided: {sent}")
        if request.get("model") != MODEL:
            return self._error(handler, record, 404, f"model {request.get('model')} not found")
        if "ALWAYS429" in prompt or ("RATE429" in prompt and attempt == 1):
            return self._error(handler, record, 429, "slow down", {"Retry-After": RETRY_AFTER})
        if "ALWAYS500" in prompt or ("FLAKY500" in prompt and attempt == 1):
            return self._error(handler, record, 500, "boom")
        if self.hang.is_set():
            time.sleep(3600)
        if "SLOW" in prompt:
            time.sleep(self.slow_seconds)
        if self.delay:
            time.sleep(self.delay)
        content, refusal = self.answer(prompt)
        record["reply"] = content
        message = {"role": "assistant", "content": content, "refusal": refusal}
        choice = {"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}
        if request.get("logprobs") and content:
            choice["logprobs"] = {"content": self.logprobs(content)}
        body = {
            "id": f"cmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": MODEL,
            "choices": [choice],
            "usage": {
                "prompt_tokens": len(prompt) // 4,
                "completion_tokens": 7,
                "total_tokens": len(prompt) // 4 + 7,
            },
        }
        self._send(handler, 200, body)

    @staticmethod
    def passage(prompt: str) -> str:
        found = re.search(r"Passage \(from \"[^\"]*\"\):\n(.*?)\n\nAnswer with", prompt, re.S)
        return found.group(1) if found else prompt

    @staticmethod
    def nuggets(prompt: str) -> str:
        """A nugget proposal's answer: one nugget per numbered passage, citing it (with
        offsets of its own, which Assay must ignore); ``PROSE`` in the question answers
        prose, ``UNSENT`` adds a nugget citing a passage that was not sent (``REFUSE``:
        a refusal, in ``answer``)."""
        question = re.search(r"Question: (.*)", prompt).group(1)
        if "PROSE" in question:
            return "Here are some facts: lift comes from pressure."
        numbers = [int(n) for n in re.findall(r"^\[(\d+)\] ", prompt, re.M)]
        items = [
            {
                "text": f"Fact stated by passage {n}",
                "importance": "vital" if n == 1 else "okay",
                "passages": [n],
                "doc_id": "made-up",
                "start": 999,
                "end": 1999,
            }
            for n in numbers
        ]
        if "UNSENT" in question:
            items.append({"text": "Invented", "importance": "okay", "passages": [len(numbers) + 7]})
        return json.dumps({"nuggets": items})

    @staticmethod
    def _words(text: str) -> list[str]:
        return [w for w in re.findall(r"\w+", text.lower()) if len(w) >= 4 or not w.isascii()]

    @classmethod
    def assign(cls, prompt: str) -> str:
        """An answer's nugget assignment: ``support`` when the nugget's text is in the
        answer (case aside), ``partial`` when its first word is, else ``not``. In the
        question, ``NUGGETPROSE`` answers prose, ``NUGGETMISSING`` leaves the last nugget
        out, ``NUGGETLEVEL`` answers a level off the scale."""
        zh = prompt.startswith("你要判断")
        question = re.search(r"(?:Question: |问题：)(.*)", prompt).group(1)
        answer = re.search(r"(?:Answer:|回答：)\n(.*?)\n\n(?:Nuggets:|要点：)", prompt, re.S)
        answer = answer.group(1).lower()
        nuggets = re.findall(r"^\[(\d+)\] (.*)$", prompt, re.M)
        if "NUGGETPROSE" in question:
            return "The answer supports the first nugget."
        items = []
        for number, text in nuggets:
            text = text.lower()
            first = text.split()[0] if " " in text else text[:2]
            level = "support" if text in answer else "partial" if first in answer else "not"
            items.append({"nugget": int(number), "support": level})
        if "NUGGETMISSING" in question:
            items = items[:-1]
        if "NUGGETLEVEL" in question and items:
            items[0]["support"] = "yes"
        if zh:
            items = list(reversed(items))  # any order will do
        return json.dumps({"nuggets": items}, ensure_ascii=False)

    @classmethod
    def support(cls, prompt: str) -> str:
        """A citation's support: ``full`` when the sentence (its end's punctuation aside)
        is in the cited text, ``partial`` when a word of 4+ letters (any Chinese word) is,
        else ``none``. In the sentence, ``SUPPORTPROSE`` answers prose and ``SUPPORTBAD``
        a level off the scale."""
        sentence = re.search(r"(?:Sentence: |句子：)(.*)", prompt).group(1)
        cited = re.search(r"(?:\):|）：)\n(.*?)\n\n", prompt, re.S).group(1).lower()
        if "SUPPORTPROSE" in sentence:
            return "Fully supported, I think."
        if "SUPPORTBAD" in sentence:
            return json.dumps({"support": "maybe"})
        claim = sentence.lower().rstrip(".。!！ ")
        if claim in cited:
            level = "full"
        elif any(word in cited for word in cls._words(claim)):
            level = "partial"
        else:
            level = "none"
        return json.dumps({"support": level, "reason": f"{level} by the fake judge"})

    def answer(self, prompt: str) -> tuple[str | None, str | None]:
        if prompt.startswith(("You judge which facts an answer", "你要判断一个问题的回答")):
            return self.assign(prompt), None
        if prompt.startswith(("You judge whether a cited text", "你要判断一段被引用的文字")):
            return self.support(prompt), None
        if prompt.startswith("You write the nuggets of a question"):
            if "REFUSE" in re.search(r"Question: (.*)", prompt).group(1):
                return None, "I cannot help with that."
            return self.nuggets(prompt), None
        passage = self.passage(prompt)
        if "REFUSE" in passage:
            return None, "I cannot help with that."
        if "MALFORMED" in passage:
            return "The passage seems quite relevant, I would say a 2.", None
        if "SEVEN" in passage:
            return json.dumps({"grade": 7, "reason": "very relevant"}), None
        if "EMPTY" in passage:
            return "", None
        if "LONG" in passage:
            return json.dumps({"grade": 2, "reason": "x" * 5000}), None
        grade = self.grade(passage)
        if "DIGIT" in passage:
            return str(grade), None
        return json.dumps({"grade": grade, "reason": f"reason for grade {grade}"}), None

    @staticmethod
    def grade(passage: str) -> int:
        found = re.search(r"GRADE=([0-9])", passage)
        return int(found.group(1)) if found else len(passage) % 4

    @staticmethod
    def logprobs(content: str) -> list[dict]:
        """Each character a token; a grade digit is sure (0.9) unless it is 1 or 2 (0.5)."""
        tokens = []
        for ch in content:
            if ch in "0123":
                sure = 0.9 if ch in "03" else 0.5
                other = "1" if ch != "1" else "2"
                import math

                tokens.append(
                    {
                        "token": ch,
                        "logprob": math.log(sure),
                        "bytes": None,
                        "top_logprobs": [
                            {"token": ch, "logprob": math.log(sure), "bytes": None},
                            {"token": other, "logprob": math.log(1 - sure), "bytes": None},
                        ],
                    }
                )
            else:
                tokens.append({"token": ch, "logprob": 0.0, "bytes": None, "top_logprobs": []})
        return tokens
