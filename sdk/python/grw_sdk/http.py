"""Outbound HTTP for notifiers, and how a delivery's outcome is judged."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable

__all__ = [
    "DeliveryError",
    "GiveUp",
    "Http",
    "HttpRequest",
    "HttpResponse",
    "Retry",
    "SendError",
]


class DeliveryError(Exception):
    """Why a delivery failed: raise :class:`Retry` or :class:`GiveUp`."""

    def __init__(self, message: str):
        super().__init__(message)
        #: The reason, shown in GRW's log.
        self.message = message

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.message == self.message  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), self.message))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"


class Retry(DeliveryError):
    """Worth trying again later (receiver down, 5xx, timeout)."""


class GiveUp(DeliveryError):
    """Will never succeed (rejected as invalid)."""


class SendError(Exception):
    """A request that could not be sent: host not allowed, connection
    refused, timeout. The message is the host's."""


@dataclass
class HttpRequest:
    """An HTTP request a notifier sends through GRW. Its URL's host must be
    allowed by both the plugin's manifest and the operator.

    The builder methods change the request and return it::

        HttpRequest.post(url).header("authorization", "Bearer t0ken").json({"text": "hi"})
    """

    method: str
    url: str
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""

    @classmethod
    def get(cls, url: str) -> HttpRequest:
        """A ``GET`` request."""
        return cls("GET", url)

    @classmethod
    def post(cls, url: str) -> HttpRequest:
        """A ``POST`` request."""
        return cls("POST", url)

    @classmethod
    def put(cls, url: str) -> HttpRequest:
        """A ``PUT`` request."""
        return cls("PUT", url)

    def header(self, name: str, value: str) -> HttpRequest:
        """Adds a header."""
        self.headers.append((name, value))
        return self

    def with_body(self, body: bytes | str) -> HttpRequest:
        """Sets the body; text is sent as UTF-8."""
        self.body = body.encode() if isinstance(body, str) else bytes(body)
        return self

    def json(self, value: Any) -> HttpRequest:
        """Sets a compact JSON body and ``content-type: application/json``."""
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        return self.header("content-type", "application/json").with_body(text)


@dataclass
class HttpResponse:
    """The answer to an :class:`HttpRequest`."""

    status: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""

    def header(self, name: str) -> str | None:
        """The first value of a header; names compare case-insensitively."""
        name = name.lower()
        return next((v for n, v in self.headers if n.lower() == name), None)

    @property
    def is_success(self) -> bool:
        """Whether the status is 2xx."""
        return 200 <= self.status < 300

    @property
    def text(self) -> str:
        """The body as text, invalid UTF-8 replaced."""
        return self.body.decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body)

    def error_for_status(self) -> HttpResponse:
        """Raises the matching :class:`DeliveryError` for a failure status:
        408, 429 and 5xx are :class:`Retry`, other 4xx :class:`GiveUp`. Any
        other status (2xx, and 1xx/3xx) returns the response."""
        status = self.status
        if status in (408, 429) or 500 <= status <= 599:
            raise Retry(self._reason())
        if 400 <= status <= 499:
            raise GiveUp(self._reason())
        return self

    def _reason(self) -> str:
        text = self.text.strip()
        if not text:
            return f"receiver answered {self.status}"
        return f"receiver answered {self.status}: {text[:200]}"


class Http:
    """Outbound HTTP, as GRW grants it to notifiers.

    Inside GRW requests go through the host, which enforces the allowed
    hosts and the call's time limit; in unit tests use
    :class:`grw_sdk.testing.RecordingHttp`. Subclasses implement
    :meth:`send`.
    """

    def send(self, request: HttpRequest) -> HttpResponse:
        """Sends a request. Raises :class:`SendError` when it could not be
        sent; an error status is a response here, not an error."""
        raise NotImplementedError

    def deliver(self, request: HttpRequest) -> HttpResponse:
        """Sends a request and judges the outcome as most notifiers want:

        - a 2xx response is returned;
        - a failure to send (the host's message as it is), and 408, 429 and
          5xx answers, raise :class:`Retry`: they may pass later;
        - any other status raises :class:`GiveUp`: other 4xx will not change
          by retrying, and GRW does not follow redirects, so a 3xx means the
          configured URL needs fixing.
        """
        try:
            response = self.send(request)
        except SendError as e:
            raise Retry(str(e)) from None
        response.error_for_status()
        if not response.is_success:
            raise GiveUp(
                f"receiver answered {response.status}; GRW does not follow redirects, "
                "so point the plugin at the final URL"
            )
        return response

    def post_json(
        self, url: str, value: Any, headers: Iterable[tuple[str, str]] = ()
    ) -> HttpResponse:
        """POSTs ``value`` as JSON (after ``headers``) and judges the outcome
        like :meth:`deliver`."""
        request = HttpRequest.post(url)
        for name, header_value in headers:
            request.header(name, header_value)
        return self.deliver(request.json(value))
