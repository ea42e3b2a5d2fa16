"""One judging call to an OpenAI-compatible endpoint, with retries, a budget and a rate limit.

Uses the official ``openai`` client (its ``base_url`` reaches OpenAI, vLLM, Ollama,
llama.cpp's server and others) with its own retries off: this module retries 429, 5xx,
timeouts and connection errors itself, waiting what ``Retry-After`` asks (else an
exponential backoff), so that every call is counted against the job's budget. Failure
texts are fixed sentences: nothing the server says (which may echo a key) is kept. No
Django import.
"""

from __future__ import annotations

import email.utils
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from formats.errors import Problem, define, gettext_noop

from .endpoints import HostPolicy, KeyRefused, guarded_client, resolve_key
from .parsing import ANSWERED_NOTHING, TOP, AnswerError, grade_confidence, parse_answer


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    model: str
    api_key_env: str
    temperature: float
    max_tokens: int
    timeout: float
    logprobs: bool = False
    project: str = ""  # the judge's project, which its key must be allowed for
    by_operator: bool = False  # configured with add_judge rather than on the web
    # The hosts a web-configured judge may reach (None: public hosts only).
    hosts: HostPolicy | None = None


@dataclass
class Outcome:
    grade: int | None = None
    reason: str = ""
    confidence: float | None = None
    failure: str = ""  # a ``Failure`` value when no grade
    detail: Problem | None = None
    calls: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    fatal: bool = False  # every further call would fail the same way
    answer: str = ""  # the model's text, for calls that read it themselves (``Caller.ask``)
    # The job must pause before this pair is settled (breaker open, budget spent): the
    # pair stays waiting and is asked again when the job resumes.
    interrupted: bool = False
    raw: str = ""  # the model's reply when it could not be read (first RAW_BYTES bytes)


class Budget:
    """At most ``limit`` calls, shared by the threads of one job."""

    def __init__(self, limit: int, used: int = 0):
        self.limit, self.used = limit, used
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            if self.used >= self.limit:
                return False
            self.used += 1
            return True


RAW_BYTES = 2048
TRANSIENT = ("timeout", "unreachable", "server_error")


def clip_raw(text: str | None, secret: str = "") -> str:
    """The first ``RAW_BYTES`` bytes of a reply, with the key blanked should it echo it."""
    text = text or ""
    if secret:
        text = text.replace(secret, "***")
    return text.encode()[:RAW_BYTES].decode(errors="ignore")


def _reply_text(response) -> str:
    """What the model said in a completed call (its text or its refusal), if anything."""
    choices = getattr(response, "choices", None) or []
    if not choices:
        return ""
    message = choices[0].message
    return getattr(message, "content", None) or getattr(message, "refusal", None) or ""


class Breaker:
    """Opens after ``limit`` connection errors, timeouts or 5xx in a row (any answer from
    the endpoint closes the count); also counts HTTP 429s, to say why a budget ran out.
    Shared by the threads of one job."""

    def __init__(self, limit: int):
        self.limit = limit
        self.run: list[str] = []  # the failures in a row, by kind
        self.rate_limited = 0  # HTTP 429s of this run, in all
        self._lock = threading.Lock()

    @property
    def open(self) -> bool:
        return len(self.run) >= self.limit

    def failed(self, kind: str) -> None:
        with self._lock:
            if kind in TRANSIENT and not self.open:
                self.run.append(kind)
            elif kind == "rate_limited":
                self.rate_limited += 1
                self.run.clear()

    def answered(self) -> None:
        with self._lock:
            self.run.clear()

    def problem(self) -> Problem:
        kinds = set(self.run)
        count = len(self.run)
        if kinds == {"timeout"}:
            return ENDPOINT_TIMEOUTS(count=count)
        if kinds == {"unreachable"}:
            return ENDPOINT_UNREACHABLE(count=count)
        if kinds == {"server_error"}:
            return ENDPOINT_5XX(count=count)
        return ENDPOINT_FAILING(count=count)


class RateLimiter:
    """Spaces call starts at least 60/rpm seconds apart (rpm 0: no limit)."""

    def __init__(self, rpm: int, sleep: Callable[[float], None], clock=time.monotonic):
        self.interval = 60.0 / rpm if rpm else 0.0
        self.sleep, self.clock = sleep, clock
        self._next = 0.0
        self._lock = threading.Lock()

    def wait(self) -> None:
        if not self.interval:
            return
        with self._lock:
            now = self.clock()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            self.sleep(start - now)


BUDGET_SPENT = define("judge_call.budget", gettext_noop("the job's call budget is spent"))
NO_ANSWER_WITHIN = define("judge_call.timeout", gettext_noop("no answer within %(seconds)s s"))
NO_CONNECTION = define("judge_call.unreachable", gettext_noop("could not connect to the endpoint"))
RATE_LIMITED = define("judge_call.rate_limited", gettext_noop("HTTP 429 (rate limited)"))
SERVER_ERROR = define("judge_call.server_error", gettext_noop("HTTP %(status)s (server error)"))
KEY_REFUSED = define(
    "judge_call.auth", gettext_noop("HTTP %(status)s: the endpoint refused the API key")
)
UNKNOWN_MODEL = define(
    "judge_call.not_found", gettext_noop("HTTP 404: unknown model, or the base URL is wrong")
)
REQUEST_REFUSED = define(
    "judge_call.bad_request", gettext_noop("HTTP %(status)s: the endpoint refused the request")
)
UNREADABLE = define("judge_call.unreadable", gettext_noop("the response is not readable"))
NO_CHOICE = define("judge_call.no_answer", gettext_noop("the response has no answer"))
REFUSED = define("judge_call.refusal", gettext_noop("the model refused to grade"))
ENDPOINT_TIMEOUTS = define(
    "judge_call.breaker_timeouts",
    gettext_noop("endpoint not answering: %(count)s timeouts in a row"),
)
ENDPOINT_UNREACHABLE = define(
    "judge_call.breaker_unreachable",
    gettext_noop("endpoint not answering: %(count)s connection errors in a row"),
)
ENDPOINT_5XX = define(
    "judge_call.breaker_5xx",
    gettext_noop("endpoint not answering: %(count)s server errors (5xx) in a row"),
)
ENDPOINT_FAILING = define(
    "judge_call.breaker",
    gettext_noop("endpoint not answering: %(count)s timeouts, connection errors or 5xx in a row"),
)
REFUSED_ANSWER = define("judge_call.refusal_answer", gettext_noop("the model refused to answer"))
NOT_OPENAI = define(
    "judge_call.not_openai",
    gettext_noop("the endpoint did not answer as an OpenAI-compatible server"),
)
# What the endpoint's side alone tells (HTTP statuses, timeouts, refused connections,
# bodies that are not a chat completion): for a judge configured on the web, all of it is
# NOT_OPENAI, so a job cannot scan the network. Answers the model gave (malformed, empty,
# refused …) are kept as they are.
ENDPOINT_FAILURES = frozenset(
    {"timeout", "unreachable", "rate_limited", "server_error", "auth", "not_found", "bad_request"}
)
ENDPOINT_DETAILS = frozenset({UNREADABLE.code, NO_CHOICE.code})

# The key's variable breaks the rule, is not allowed for the judge's project or is not set
# where the worker runs; ``problem`` says which.
MissingKey = KeyRefused


def retry_after(response, limit: float) -> float | None:
    """Seconds the server asks to wait (``retry-after-ms`` or ``Retry-After`` as seconds or
    an HTTP date), capped at ``limit``; None when it does not say."""
    if response is None:
        return None
    headers = response.headers
    try:
        if headers.get("retry-after-ms"):
            return min(limit, max(0.0, float(headers["retry-after-ms"]) / 1000))
        value = headers.get("retry-after")
        if not value:
            return None
        try:
            seconds = float(value)
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            seconds = when.timestamp() - time.time()
        return min(limit, max(0.0, seconds))
    except (TypeError, ValueError, OverflowError):
        return None


class Caller:
    """Judges prompts against one endpoint; thread-safe (one client, shared budget)."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        budget: Budget,
        limiter: RateLimiter,
        sleep: Callable[[float], None] = time.sleep,
        attempts: int = 4,
        backoff: float = 1.0,
        max_wait: float = 60.0,
        breaker: Breaker | None = None,
    ):
        key = resolve_key(
            endpoint.api_key_env, project=endpoint.project, by_operator=endpoint.by_operator
        )
        self.endpoint = endpoint
        # A web-configured judge connects only where the host rules allow, every connection
        # checked; no judge follows a redirect.
        hosts = None if endpoint.by_operator else endpoint.hosts or HostPolicy.parse(["*"])
        import openai  # here, not at the top: every process loading the judges app pays

        self.client = openai.OpenAI(
            base_url=endpoint.base_url,
            api_key=key,
            timeout=endpoint.timeout,
            max_retries=0,
            http_client=guarded_client(hosts, endpoint.timeout),
        )
        self.budget, self.limiter, self.sleep = budget, limiter, sleep
        self.attempts, self.backoff, self.max_wait = attempts, backoff, max_wait
        self.breaker = breaker or Breaker(10**9)
        self.secret = key

    def _request(self, prompt: str):
        extra = {"logprobs": True, "top_logprobs": 4} if self.endpoint.logprobs else {}
        return self.client.chat.completions.create(
            model=self.endpoint.model,
            messages=[{"role": "user", "content": prompt}],
            temperature=self.endpoint.temperature,
            max_tokens=self.endpoint.max_tokens,
            response_format={"type": "json_object"},
            **extra,
        )

    def judge(self, prompt: str, top: int = TOP) -> Outcome:
        """A grade 0..``top`` for the prompt (``parsing.parse_answer``), or a failure."""
        return self._call(prompt, _read if top == TOP else partial(_read, top=top))

    def ask(self, prompt: str) -> Outcome:
        """The model's answer as text (``Outcome.answer``) for the caller to read, or a
        failure: the same retries, budget, rate limit and failure kinds as ``judge``."""
        return self._call(prompt, _read_text)

    def _call(self, prompt: str, read: Callable[[object, Outcome], Outcome]) -> Outcome:
        outcome = self._attempts(prompt, read)
        if outcome.interrupted:
            return outcome
        if not self.endpoint.by_operator and _from_endpoint(outcome):
            # A judge configured on the web learns nothing of what answered (status codes,
            # open or closed ports): its failures say one sentence.
            outcome.failure, outcome.detail = "endpoint", NOT_OPENAI()
        return outcome

    def _attempts(self, prompt: str, read: Callable[[object, Outcome], Outcome]) -> Outcome:
        import openai

        outcome = Outcome()
        for attempt in range(self.attempts):
            if self.breaker.open or not self.budget.take():
                outcome.interrupted = True
                return outcome
            self.limiter.wait()
            outcome.calls += 1
            wait = min(self.max_wait, self.backoff * 2**attempt)
            try:
                response = self._request(prompt)
            except openai.APITimeoutError:
                outcome.failure = "timeout"
                outcome.detail = NO_ANSWER_WITHIN(seconds=f"{self.endpoint.timeout:g}")
            except openai.APIConnectionError:
                outcome.failure, outcome.detail = "unreachable", NO_CONNECTION()
            except openai.RateLimitError as error:
                outcome.failure, outcome.detail = "rate_limited", RATE_LIMITED()
                wait = _pick(retry_after(error.response, self.max_wait), wait)
            except openai.InternalServerError as error:
                outcome.failure = "server_error"
                outcome.detail = SERVER_ERROR(status=error.status_code)
                wait = _pick(retry_after(error.response, self.max_wait), wait)
            except (openai.AuthenticationError, openai.PermissionDeniedError) as error:
                outcome.failure, outcome.fatal = "auth", True
                outcome.detail = KEY_REFUSED(status=error.status_code)
                if self.endpoint.by_operator:
                    return outcome
            except openai.NotFoundError:
                outcome.failure, outcome.fatal = "not_found", True
                outcome.detail = UNKNOWN_MODEL()
                if self.endpoint.by_operator:
                    return outcome
            except openai.APIStatusError as error:
                outcome.failure = "bad_request"
                outcome.detail = REQUEST_REFUSED(status=error.status_code)
                if self.endpoint.by_operator:
                    return outcome
            except openai.APIError:  # a body the client cannot read
                outcome.failure, outcome.detail = "malformed", UNREADABLE()
                if self.endpoint.by_operator:
                    return outcome
            else:
                self.breaker.answered()
                outcome = read(response, outcome)
                if outcome.failure:
                    outcome.raw = clip_raw(_reply_text(response), self.secret)
                if self.endpoint.by_operator or not _from_endpoint(outcome):
                    return outcome
            if self.endpoint.by_operator:
                # An operator's judge pauses after N endpoint failures in a row (the
                # breaker); one configured on the web ends as below, telling nothing.
                self.breaker.failed(outcome.failure)
                if self.breaker.open:
                    outcome.interrupted = True
                    return outcome
            if attempt < self.attempts - 1:
                outcome.retries += 1
                self.sleep(wait)
        # A judge configured on the web meets every failure of the endpoint the same way
        # (tried ``attempts`` times, then the job's other pairs end without calls), so its
        # counters tell a closed port from an open one no more than its messages do.
        outcome.fatal = not self.endpoint.by_operator and _from_endpoint(outcome)
        return outcome


def _from_endpoint(outcome: Outcome) -> bool:
    """A failure only the endpoint's side explains (see ``ENDPOINT_FAILURES``)."""
    return outcome.failure in ENDPOINT_FAILURES or (
        outcome.detail is not None and outcome.detail.code in ENDPOINT_DETAILS
    )


def _pick(asked: float | None, default: float) -> float:
    return default if asked is None else asked


def _choice(response, outcome: Outcome, refused=REFUSED):
    """The answer's first choice with the call's tokens counted, or None (a failure set;
    ``refused`` says a refusal)."""
    usage = getattr(response, "usage", None)
    if usage is not None:
        outcome.prompt_tokens = int(usage.prompt_tokens or 0)
        outcome.completion_tokens = int(usage.completion_tokens or 0)
    choices = getattr(response, "choices", None) or []
    if not choices:
        outcome.failure, outcome.detail = "malformed", NO_CHOICE()
        return None
    choice = choices[0]
    if getattr(choice.message, "refusal", None) or choice.finish_reason == "content_filter":
        outcome.failure, outcome.detail = "refusal", refused()
        return None
    return choice


def _read_text(response, outcome: Outcome) -> Outcome:
    """The text and tokens of a completed call; an empty answer is a failure."""
    choice = _choice(response, outcome, REFUSED_ANSWER)
    if choice is None:
        return outcome
    text = choice.message.content or ""
    if not text.strip():
        outcome.failure, outcome.detail = "empty", ANSWERED_NOTHING()
        return outcome
    outcome.failure, outcome.detail, outcome.answer = "", None, text
    return outcome


def _read(response, outcome: Outcome, top: int = TOP) -> Outcome:
    """Grade, reason, confidence and tokens of a completed call."""
    choice = _choice(response, outcome)
    if choice is None:
        return outcome
    message = choice.message
    try:
        parsed = parse_answer(message.content, top)
    except AnswerError as error:
        outcome.failure, outcome.detail = error.kind, error.detail
        return outcome
    outcome.failure, outcome.detail = "", None
    outcome.grade, outcome.reason = parsed.grade, parsed.reason
    logprobs = getattr(choice, "logprobs", None)
    if logprobs is not None and logprobs.content:
        tokens = [
            (t.token, t.logprob, [(a.token, a.logprob) for a in (t.top_logprobs or [])])
            for t in logprobs.content
        ]
        outcome.confidence = grade_confidence(tokens, parsed.grade, top)
    return outcome
