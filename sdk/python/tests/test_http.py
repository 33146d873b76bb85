"""Requests, responses, and how a delivery's outcome is sorted."""

import pytest

from grw_sdk import DeliveryError, GiveUp, Http, HttpRequest, HttpResponse, Retry, SendError
from grw_sdk.testing import RecordingHttp


def test_request_builder():
    request = HttpRequest.put("http://x/y").header("a", "1").json({"k": 1, "t": "é"})
    assert request.method == "PUT"
    assert request.url == "http://x/y"
    assert request.headers == [("a", "1"), ("content-type", "application/json")]
    assert request.body == '{"k":1,"t":"é"}'.encode()
    assert HttpRequest.get("u").with_body("b").body == b"b"
    assert HttpRequest.post("u").method == "POST"


def test_response_helpers():
    response = HttpResponse(200, [("Content-Type", "text/plain"), ("content-type", "x")], b"ok \xff")
    assert response.is_success
    assert response.header("content-type") == "text/plain"
    assert response.header("retry-after") is None
    assert response.text == "ok \ufffd"
    assert HttpResponse(200, body=b'{"a": 1}').json() == {"a": 1}


@pytest.mark.parametrize("status", [408, 429, 500, 503, 599])
def test_statuses_worth_retrying(status):
    with pytest.raises(Retry) as caught:
        HttpResponse(status, body=b"why").error_for_status()
    assert caught.value == Retry(f"receiver answered {status}: why")


@pytest.mark.parametrize("status", [400, 401, 404, 422, 499])
def test_statuses_given_up(status):
    with pytest.raises(GiveUp) as caught:
        HttpResponse(status, body=b"why").error_for_status()
    assert caught.value.message == f"receiver answered {status}: why"


@pytest.mark.parametrize("status", [100, 200, 204, 302])
def test_other_statuses_return_the_response(status):
    response = HttpResponse(status)
    assert response.error_for_status() is response


def test_reasons_are_trimmed_and_cut():
    with pytest.raises(GiveUp) as caught:
        HttpResponse(400, body=b"  \n ").error_for_status()
    assert caught.value.message == "receiver answered 400"
    with pytest.raises(Retry) as caught:
        HttpResponse(500, body=("é" * 300).encode()).error_for_status()
    assert caught.value.message == "receiver answered 500: " + "é" * 200


class Fixed(Http):
    """Answers every request with one status and the body `why`, or fails."""

    def __init__(self, answer):
        self.answer = answer

    def send(self, request):
        if isinstance(self.answer, str):
            raise SendError(self.answer)
        return HttpResponse(self.answer, body=b"why")


def outcome(answer):
    try:
        return Fixed(answer).deliver(HttpRequest.post("http://hook")).status
    except DeliveryError as e:
        return e


def test_deliver_sorts_the_outcome():
    assert outcome(200) == 200
    assert outcome(204) == 204
    for status in (408, 429, 500, 503):
        assert outcome(status) == Retry(f"receiver answered {status}: why")
    assert outcome("host x:443 is not allowed: ...") == Retry("host x:443 is not allowed: ...")
    assert outcome(404) == GiveUp("receiver answered 404: why")
    assert outcome(302) == GiveUp(
        "receiver answered 302; GRW does not follow redirects, so point the plugin at the final URL"
    )
    assert outcome(101) == GiveUp(
        "receiver answered 101; GRW does not follow redirects, so point the plugin at the final URL"
    )


def test_post_json_sends_and_judges():
    http = RecordingHttp().respond(503).respond(301)
    with pytest.raises(Retry):
        http.post_json("https://hooks.example.com/grw", {"text": "hi"})
    with pytest.raises(GiveUp):
        http.post_json("https://hooks.example.com/grw", {"text": "hi"})
    response = http.post_json("https://hooks.example.com/grw", {"text": "hi"}, headers=[("x-a", "1")])
    assert response.status == 200
    assert http.requests[-1] == HttpRequest(
        "POST",
        "https://hooks.example.com/grw",
        [("x-a", "1"), ("content-type", "application/json")],
        b'{"text":"hi"}',
    )


def test_delivery_errors_compare_by_kind_and_message():
    assert Retry("a") == Retry("a")
    assert Retry("a") != GiveUp("a")
    assert Retry("a") != Retry("b")
    assert repr(GiveUp("x")) == "GiveUp('x')"
    assert str(Retry("x")) == "x"
    assert len({Retry("a"), Retry("a"), GiveUp("a")}) == 2
