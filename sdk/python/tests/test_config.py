"""Configuration errors name the key and say what was expected."""

import pytest

from grw_sdk import Config, ConfigError, FieldPath, LabelSelector


def error(text, read):
    with pytest.raises(ConfigError) as caught:
        config = Config(text)
        read(config)
        config.done()
    return str(caught.value)


def test_empty_text_is_an_empty_object():
    for text in (None, "", "  \n", "{}"):
        config = Config(text)
        assert config.value == {}
        assert config.int("min", default=1) == 1
        config.done()


def test_values_of_each_type():
    config = Config(
        '{"url": "https://x", "min": 2, "ratio": 0.5, "on": true, "names": ["a", "b"], '
        '"path": "status.phase", "paths": ["/a~1b"], "selector": "app in (web)", "raw": {"k": [1]}}'
    )
    assert config.str("url", required=True) == "https://x"
    assert config.int("min", default=1, minimum=0) == 2
    assert config.number("ratio") == 0.5
    assert config.bool("on") is True
    assert config.list_of_str("names") == ["a", "b"]
    assert config.field_path("path") == FieldPath("status.phase")
    assert config.list_of_field_paths("paths")[0].segments == ("a/b",)
    assert config.selector("selector") == LabelSelector.parse("app in (web)")
    assert config.get("raw") == {"k": [1]}
    assert "raw" in config
    config.done()


def test_defaults_apply_to_absent_and_null_keys():
    config = Config('{"channel": null}')
    assert config.str("channel") is None
    assert config.str("username", "grw") == "grw"
    assert config.int("maxFields", 5) == 5
    assert config.bool("verbose", False) is False
    assert config.list_of_str("include", ["x"]) == ["x"]
    assert config.list_of_field_paths("ignore", ["status"]) == [FieldPath("status")]
    assert config.field_path("path", "a.b") == FieldPath("a.b")
    assert config.selector("selector").is_empty
    assert config.get("other", 3) == 3
    config.done()


@pytest.mark.parametrize(
    "text,read,message",
    [
        ("3", lambda c: None, "config is not valid: invalid type: integer `3`, expected a JSON object"),
        ("[]", lambda c: None, "config is not valid: invalid type: sequence, expected a JSON object"),
        ("{}", lambda c: c.str("url", required=True), "config is not valid: missing field `url`"),
        ('{"url": null}', lambda c: c.str("url", required=True), "config key `url`: invalid type: null, expected a string"),
        ('{"channel": 5}', lambda c: c.str("channel"), "config key `channel`: invalid type: integer `5`, expected a string"),
        ('{"min": "3"}', lambda c: c.int("min"), 'config key `min`: invalid type: string "3", expected an integer'),
        ('{"min": 3.0}', lambda c: c.int("min"), "config key `min`: invalid type: floating point `3.0`, expected an integer"),
        ('{"min": true}', lambda c: c.int("min"), "config key `min`: invalid type: boolean `true`, expected an integer"),
        ('{"min": -1}', lambda c: c.int("min", default=1, minimum=0), "config key `min`: must be at least 0"),
        ('{"min": 11}', lambda c: c.int("min", maximum=10), "config key `min`: must be at most 10"),
        ('{"ratio": "x"}', lambda c: c.number("ratio"), 'config key `ratio`: invalid type: string "x", expected a number'),
        ('{"on": 1}', lambda c: c.bool("on"), "config key `on`: invalid type: integer `1`, expected a boolean"),
        ('{"include": "a"}', lambda c: c.list_of_str("include"), 'config key `include`: invalid type: string "a", expected a list'),
        ('{"include": ["a", 3]}', lambda c: c.list_of_str("include"), "config key `include[1]`: invalid type: integer `3`, expected a string"),
        ('{"include": [{}]}', lambda c: c.list_of_str("include"), "config key `include[0]`: invalid type: map, expected a string"),
        ('{"do": "fly"}', lambda c: c.str("do", choices=["pass", "loop"]), "config key `do`: unknown value `fly`, expected one of `pass`, `loop`"),
        (
            '{"path": "a..b"}',
            lambda c: c.field_path("path"),
            "config key `path`: field path `a..b` has an empty segment; write `a.b.c`, or a JSON pointer like `/a/b`",
        ),
        (
            '{"ignore": ["ok", "/a~2"]}',
            lambda c: c.list_of_field_paths("ignore"),
            "config key `ignore[1]`: field path `/a~2`: `~` must be followed by `0` or `1` in a JSON pointer",
        ),
        (
            '{"selector": "app in web"}',
            lambda c: c.selector("selector"),
            "config key `selector`: invalid label selector `app in web`: expected `(` after `in` at position 7, found `web`",
        ),
    ],
)
def test_errors_name_the_key(text, read, message):
    assert error(text, read) == message


def test_invalid_json_says_where():
    message = error('{"min": 1,', lambda c: None)
    assert message.startswith("config is not valid JSON: "), message
    assert "line 1 column 11" in message, message


def test_unknown_keys_are_rejected_with_the_accepted_ones():
    def read(config):
        config.int("min", 1)
        config.str("url")

    assert error('{"min": 1, "mn": 2}', read) == "unknown config key `mn`; accepted: min, url"
    assert error('{"x": 1, "min": 1, "y": 2}', read) == "unknown config keys `x`, `y`; accepted: min, url"
    assert error('{"x": 1}', lambda c: None) == "unknown config key `x`; the plugin takes no keys"


def test_sections_name_their_keys_with_the_path():
    def kinds(config):
        for pattern in config.list_of_sections("kinds"):
            pattern.str("group")
            pattern.str("kind")

    assert error('{"kinds": [{"kind": "Pod"}, {"knd": "Pod"}]}', kinds) == (
        "unknown config key `kinds[1].knd`; accepted: group, kind"
    )
    assert error('{"kinds": [{"kind": 3}]}', kinds) == (
        "config key `kinds[0].kind`: invalid type: integer `3`, expected a string"
    )
    assert error('{"kinds": ["Pod"]}', kinds) == (
        'config key `kinds[0]`: invalid type: string "Pod", expected a JSON object'
    )
    assert error('{"kinds": {}}', kinds) == "config key `kinds`: invalid type: map, expected a list"

    def auth(config):
        config.section("auth").str("token", required=True)

    assert error('{"auth": {}}', auth) == "config key `auth`: missing field `token`"
    assert error('{"auth": 1}', auth) == "config key `auth`: invalid type: integer `1`, expected a JSON object"
    assert error('{"auth": {"token": "t", "x": 1}}', auth) == "unknown config key `auth.x`; accepted: token"


def test_plugins_raise_their_own_errors_about_a_key():
    config = Config('{"url": "ftp://x"}')
    assert str(config.error("url", "expected an http:// URL")) == "config key `url`: expected an http:// URL"
    assert config.path("url") == "url"


def test_a_dict_is_taken_as_it_is():
    config = Config({"min": 2})
    assert config.int("min") == 2
    config.done()
