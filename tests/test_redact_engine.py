"""Unit tests of the redaction engine, one family of rules at a time.

Secret-shaped strings are assembled from pieces at run time (``"gh" + "p_" + ...``) so the
repository itself holds nothing a secret scanner would flag; each is valid by its vendor's
documented format.
"""

from __future__ import annotations

import hashlib
import hmac
import string
from pathlib import Path

import pytest

from habitus.errors import ConfigError
from habitus.redact import Redacted, find_secrets, redact
from habitus.redact.engine import load_rules, rules


def rnd(n: int, alphabet: str = string.ascii_letters + string.digits, seed: int = 7) -> str:
    """``n`` characters cycling through a shuffled ``alphabet`` (deterministic, mixed)."""
    chars = sorted(alphabet, key=lambda c: hashlib.sha256(f"{seed}{c}".encode()).digest())
    return "".join(chars[(i * 7 + seed) % len(chars)] for i in range(n))


HEX = "0123456789abcdef"
B64 = string.ascii_letters + string.digits + "+/"
B64URL = string.ascii_letters + string.digits + "-_"


def no_run_left(secret: str, text: str) -> bool:
    """No 8-character run of ``secret`` survives in ``text``."""
    return not any(secret[i : i + 8] in text for i in range(max(1, len(secret) - 7)))


# (rule id, text, secret part) built from the vendors' documented formats
VENDOR_CASES = [
    ("anthropic-api-key", "key: {}", "sk-" + "ant-api03-" + rnd(93, B64URL) + "AA"),
    ("anthropic-api-key", "x {} y", "sk-" + "ant-admin01-" + rnd(93, B64URL) + "AA"),
    ("openai-api-key", "{}", "sk-" + "proj-" + rnd(120, B64URL)),
    ("openai-api-key", "{}", "sk-" + "svcacct-" + rnd(80, B64URL)),
    ("openai-api-key", "{}", "sk-" + rnd(20) + "T3Blbk" + "FJ" + rnd(20, seed=3)),
    (
        "aws-access-key-id",
        "id {} here",
        "AK" + "IA" + rnd(16, string.ascii_uppercase + string.digits),
    ),
    ("aws-secret-access-key", "aws_secret_access_key = {}", rnd(40, B64)),
    ("github-token", "{}", "gh" + "p_" + rnd(36)),
    ("github-token", "{}", "gh" + "s_" + rnd(36, seed=2)),
    ("github-token", "{}", "github" + "_pat_" + rnd(22) + "_" + rnd(59, seed=4)),
    ("gitlab-token", "{}", "gl" + "pat-" + rnd(20, B64URL)),
    ("slack-token", "{}", "xo" + "xb-" + "1234567890123-1234567890123-" + rnd(24)),
    (
        "slack-token",
        "{}",
        "xa"
        + "pp-1-A0"
        + rnd(9, string.ascii_uppercase + string.digits)
        + "-12345-"
        + rnd(64, HEX),
    ),
    ("stripe-key", "{}", "sk" + "_live_" + rnd(24)),
    ("stripe-key", "{}", "wh" + "sec_" + rnd(32)),
    ("google-api-key", "{}", "AI" + "za" + rnd(35, B64URL)),
    ("google-oauth", "{}", "GOC" + "SPX-" + rnd(28, B64URL)),
    ("huggingface-token", "{}", "hf" + "_" + rnd(34)),
    ("npm-token", "{}", "np" + "m_" + rnd(36)),
    ("pypi-token", "{}", "pypi-" + "AgEIcHlwaS5vcmc" + rnd(120, B64URL)),
    ("twilio-key", "twilio sid {}", "S" + "K" + rnd(32, HEX)),
    ("sendgrid-api-key", "{}", "S" + "G." + rnd(22, B64URL) + "." + rnd(43, B64URL)),
    ("dockerhub-token", "{}", "dckr" + "_pat_" + rnd(27, B64URL)),
    ("openrouter-api-key", "{}", "sk-" + "or-v1-" + rnd(64, HEX)),
    ("groq-api-key", "{}", "gs" + "k_" + rnd(52)),
    ("mistral-api-key", "MISTRAL_API_KEY={}", rnd(32)),
    ("deepseek-api-key", "DEEPSEEK_API_KEY={}", "sk-" + rnd(32, HEX)),
    ("xai-api-key", "{}", "xa" + "i-" + rnd(80)),
    ("replicate-api-token", "{}", "r" + "8_" + rnd(37)),
    ("cohere-api-key", "COHERE_API_KEY={}", rnd(40)),
    ("perplexity-api-key", "{}", "pp" + "lx-" + rnd(48)),
    ("pinecone-api-key", "{}", "pc" + "sk_" + rnd(6) + "_" + rnd(64, seed=5)),
    ("supabase-token", "{}", "sb" + "p_" + rnd(40, HEX)),
    ("vercel-token", "VERCEL_TOKEN={}", rnd(24)),
    ("cloudflare-api-token", "CLOUDFLARE_API_TOKEN={}", rnd(40)),
    ("digitalocean-token", "{}", "do" + "p_v1_" + rnd(64, HEX)),
    ("heroku-api-key", "{}", "HR" + "KU-" + rnd(60, B64URL)),
    ("heroku-api-key", "HEROKU_API_KEY: {}", "0c9e8d6a-3b1f-4a2e-9d7c-5e4f3a2b1c0d"),
    ("shopify-token", "{}", "shp" + "at_" + rnd(32, HEX)),
    ("telegram-bot-token", "{}", "1234567890:" + "AA" + rnd(33, B64URL)),
    ("discord-webhook", "https://discord.com/api/webhooks/123456789012345678/{}", rnd(68, B64URL)),
    (
        "azure-storage-key",
        "DefaultEndpointsProtocol=https;AccountName=a;AccountKey={};",
        rnd(86, B64) + "==",
    ),
    ("azure-sas-signature", "https://a.blob.core.windows.net/c?sv=2022&sig={}", rnd(43) + "%3D"),
    (
        "slack-webhook",
        "https://hooks.slack.com/services/{}",
        "T0"
        + rnd(7, string.ascii_uppercase)
        + "/B0"
        + rnd(8, string.ascii_uppercase)
        + "/"
        + rnd(24),
    ),
]

STRUCTURE_CASES = [
    ("jwt", "token {}", "eyJ" + rnd(30, B64URL) + ".eyJ" + rnd(60, B64URL) + "." + rnd(43, B64URL)),
    ("authorization-header", "Authorization: Bearer {}", rnd(40, B64URL)),
    ("authorization-header", "Authorization: Basic {}", rnd(28, B64) + "=="),
    ("bearer-token", "curl with bearer {} now", rnd(40)),
    ("netrc-password", "machine api.example.org login bob password {}", rnd(14)),
    ("cli-user-password", "curl -u bob:{} https://api.example.org", rnd(14)),
    ("cli-password-flag", "docker login -u bob -p {}", rnd(14)),
    ("cli-secret-option", "mysql --password={} db", rnd(14)),
    ("cli-secret-option", "Connect-VIServer -User root -Password {}", rnd(10) + "!"),
    ("connection-string-password", "Server=db;Database=app;User Id=app;Password={};", rnd(14)),
    ("url-query-password", "https://example.org/login?user=bob&password={}", rnd(14)),
    ("url-query-token", "https://example.org/api?access_token={}", rnd(32)),
    ("password-in-code", 'new NetworkCredential("bob", "{}")', rnd(14)),
    ("password-prose", 'The password for bob is "{}".', rnd(12)),
    ("xml-secret-value", '<add key="MailPassword" value="{}" />', rnd(12)),
]

ASSIGNMENT_CASES = [
    "DB_PASSWORD={}",
    "export STRIPE_SECRET_KEY='{}'",
    'password = "{}"',
    '"api_key": "{}"',
    "client_secret: {}",
    'apiKey := "{}"',
    ":password => '{}'",
    "if password == '{}':",
    "token = '{}'",
    "env('PAYMENT_API_TOKEN', '{}')",
    'password: str = "{}"',
]


@pytest.mark.parametrize(("rule_id", "template", "secret"), VENDOR_CASES + STRUCTURE_CASES)
def test_family_is_redacted(rule_id, template, secret):
    text = template.format(secret)
    out = redact(text)
    assert rule_id in find_secrets(text)
    assert out.changed and sum(out.counts.values()) >= 1
    assert no_run_left(secret, out.text), out.text
    assert redact(out.text).text == out.text
    assert find_secrets(out.text) == []


@pytest.mark.parametrize("template", ASSIGNMENT_CASES)
def test_secret_assignments(template):
    secret = rnd(18, seed=11)
    out = redact(template.format(secret))
    assert out.counts == {"secret-assignment": 1}, out
    assert no_run_left(secret, out.text)
    assert out.text == template.format("[REDACTED:secret-assignment]")


def test_name_is_kept_and_only_the_secret_replaced():
    key = "sk-" + "proj-" + rnd(100, B64URL)
    assert redact(f"OPENAI_API_KEY={key}").text == "OPENAI_API_KEY=[REDACTED:openai-api-key]"
    assert redact(f'export OPENAI_API_KEY="{key}"\n').text == (
        'export OPENAI_API_KEY="[REDACTED:openai-api-key]"\n'
    )


def test_overlapping_spans_merge_into_one_placeholder():
    # the openai rule and the generic assignment both match the same value
    key = "sk-" + "proj-" + rnd(100, B64URL)
    out = redact(f"OPENAI_API_KEY={key}")
    assert out.counts == {"openai-api-key": 1}
    assert out.text.count("[REDACTED:") == 1


def test_counts_and_redacted_type():
    a, b = "gh" + "p_" + rnd(36), "gh" + "p_" + rnd(36, seed=9)
    out = redact(f"{a} and {b} and {a}")
    assert isinstance(out, Redacted)
    assert out.counts == {"github-token": 3}
    assert out.changed
    clean = redact("nothing to see here")
    assert clean.counts == {} and not clean.changed


def test_tag_key_gives_stable_per_secret_tags():
    a, b = "gh" + "p_" + rnd(36), "gh" + "p_" + rnd(36, seed=9)
    key = b"run-key"
    out = redact(f"{a} {b} {a}", tag_key=key)
    tag_a = hmac.new(key, a.encode(), hashlib.sha256).hexdigest()[:8]
    tag_b = hmac.new(key, b.encode(), hashlib.sha256).hexdigest()[:8]
    assert out.text == (
        f"[REDACTED:github-token:{tag_a}] [REDACTED:github-token:{tag_b}] "
        f"[REDACTED:github-token:{tag_a}]"
    )
    assert redact(f"{a}", tag_key=key).text == f"[REDACTED:github-token:{tag_a}]"
    other = redact(f"{a}", tag_key=b"other-key").text
    assert other != f"[REDACTED:github-token:{tag_a}]" and other.startswith(
        "[REDACTED:github-token:"
    )
    assert redact(out.text, tag_key=key).text == out.text


def test_credentialed_url_keeps_user_and_host():
    pw = rnd(14)
    out = redact(f"git clone https://deploy:{pw}@git.example.org/team/repo.git")
    assert (
        out.text
        == "git clone https://deploy:[REDACTED:credentialed-url]@git.example.org/team/repo.git"
    )
    out = redact(f"DATABASE_URL=postgresql://app:{pw}@db.internal:5432/app?sslmode=require")
    assert out.text == (
        "DATABASE_URL=postgresql://app:[REDACTED:db-connection-string]@db.internal:5432/app?sslmode=require"
    )
    out = redact(f"mongodb+srv://app:{pw}@cluster0.mongodb.net/db")
    assert out.counts == {"db-connection-string": 1}


def test_url_without_password_is_untouched():
    for text in (
        "https://example.org:8443/path?x=1",
        "ssh://git@github.com:22/org/repo.git",
        "postgres://localhost:5432/app",
        "https://medium.com/@someone/post",
        "redis://:${REDIS_PASSWORD}@cache:6379/0",
    ):
        assert redact(text).text == text, text


def test_private_key_block_whole_and_unterminated():
    body = "\n".join(rnd(64, B64, seed=i) for i in range(6))
    block = f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"
    out = redact(f"key:\n{block}\ndone")
    assert out.text == "key:\n[REDACTED:private-key]\ndone"
    cut = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body[:200]}"
    out = redact(cut)
    assert out.text == "[REDACTED:private-key]"
    escaped = (
        '"private_key": "-----BEGIN PRIVATE KEY-----\\n'
        + body.replace("\n", "\\n")
        + '\\n-----END PRIVATE KEY-----\\n"'
    )
    out = redact(escaped)
    assert no_run_left(body.split("\n")[0], out.text)
    assert out.text == '"private_key": "[REDACTED:private-key]\\n"'


def test_token_inside_a_base64_blob_is_not_a_token():
    blob = "AGFzbQEAAAAB" + rnd(40, B64) + "EAAA" + rnd(60, B64URL) + rnd(40, B64, seed=3)
    assert redact(f'module.exports = Buffer.from("{blob}")').changed is False
    alone = "EAAA" + rnd(60, B64URL)
    assert redact(f"token {alone} end").counts == {"square-token": 1}


def test_pgp_private_key_block():
    body = "\n".join(rnd(64, B64, seed=i) for i in range(4))
    block = (
        "-----BEGIN PGP " + "PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n"
        f"{body}\n=AbCd\n-----END PGP PRIVATE KEY BLOCK-----"
    )
    assert redact(block).text == "[REDACTED:private-key]"


@pytest.mark.parametrize(
    "text",
    [
        "password=${DB_PASSWORD}",
        "password=$DB_PASSWORD",
        'PASSWORD="$gdcapi_db_password"',
        "api_key: {{ secrets.api_key }}",
        "token = '<your-token>'",
        "API_KEY=your_api_key_here",
        "password = 'xxxxxxxxxxxx'",
        "secret: '********'",
        "password = os.environ['DB_PASSWORD']",
        "const token = process.env.GITHUB_TOKEN",
        "password = os.getenv('DB_PASSWORD')",
        "token = get_token()",
        "password = request.form['password']",
        "password = self.password",
        "api_key = settings.API_KEY",
        "token = tok",
        "password: changeme",
        "password = 'example'",
        "SECRET_KEY = None",
        "password: true",
        "max_tokens: 4096",
        "input_tokens = 1234",
        "password_hash = compute(password)",
        "token_type = 'bearer'",
        "sort_key = 'created_at_desc_2'",
        "passwordLabel: 'Password:'",
        "def login(self, user='', password=''):",
        "Connect-VIServer $host -User $user -Password $password",
        'curl -H "Authorization: Bearer $TOKEN" https://api.example.org',
        "headers = {'Authorization': f'Bearer {token}'}",
        "docker run -u 1000:1000 -p 8080:80 image",
        "AccountKey=<YOUR_ACCOUNT_KEY>;",
        "uuid: '203db13e-70c7-462b-9a3d-bf32640cb0be'",
        "the password must be at least 8 characters",
        "Enter your password: ",
        # code shapes found on held-out corpora (site-packages, node_modules, perl)
        "if token == other.token:",
        "    api_key: str | None = None,",
        "    auth: BedrockAuth | None = None",
        "DEFAULT_LAST_PASS: Final = 2",
        "        self.webhook_secret = webhook_secret",
        "    client_secret: ClientSecret",
        '    backend: "Backend", private_key: "_EllipticCurvePrivateKey", data: bytes',
        "        nid_key = self._lib.NID_pbe_WithSHA1And3_Key_TripleDES_CBC",
        '    AttributeOID.CHALLENGE_PASSWORD: "challengePassword",',
        '_AWS_SIGNING_HEADERS = ("authorization", "x-amz-content-sha256", "x-amz-date")',
        "'ACAccountCredential', 'ACAccountStore', 'ACAccountType'",
        '"passwd:uid", "passwd:gid"',
        'my $out = $as->{pass} ? "PASS" : "FAIL";',
        "'Test2::Event::Pass' => 'cpan',",
        " * @secret: the (const) data of the derived secret.",
        'creds = " --username=" + auth',
        "this._noAuthorization = !this._isShared;",
        '"Authorization": authorization if authorization is not None else missing(),',
        "# the default password callback if you pass an encrypted key",
        'key="-----BEGIN PRIVATE KEY-----\\nXXXX\\nXXXX\\n-----END PRIVATE KEY-----"',
        'if line.startswith("-----BEGIN RSA PRIVATE KEY-----"):',
        "    password = passwd",
    ],
)
def test_value_filters_leave_non_secrets(text):
    out = redact(text)
    assert out.text == text, out.text
    assert find_secrets(text) == []


def test_find_secrets_agrees_with_redact():
    cases = [t.format(s) for _, t, s in VENDOR_CASES + STRUCTURE_CASES]
    cases += ["plain text", "password = os.environ['X']", "x = 1"]
    for text in cases:
        assert bool(find_secrets(text)) == redact(text).changed, text


def test_placeholders_never_match_and_redaction_is_idempotent():
    tagged = "[REDACTED:secret-assignment:0a1b2c3d]"
    for text in (
        "OPENAI_API_KEY=[REDACTED:openai-api-key]",
        f"password: {tagged}",
        "https://bob:[REDACTED:credentialed-url]@host/x",
        '{"token": "[REDACTED:github-token]"}',
    ):
        assert find_secrets(text) == [], text
        assert redact(text).text == text


def test_email_only_with_pii():
    text = "mail jane.doe@example.org please"
    assert redact(text).text == text
    assert redact(text, pii=True).text == "mail [REDACTED:email] please"
    assert find_secrets(text) == []


def test_lone_surrogates_and_non_ascii_pass_through():
    key = "gh" + "p_" + rnd(36)
    text = "caf\u00e9 \ud800 " + key + " \u65e5\u672c"
    out = redact(text)
    assert out.text == "caf\u00e9 \ud800 [REDACTED:github-token] \u65e5\u672c"


def test_every_rule_documents_itself():
    for rule in rules():
        assert rule.description, rule.id
        assert rule.keywords, rule.id


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[[rule]]\nid = "x"\nregex = "(a"\nkeywords = ["a"]\n', "RE2"),
        ('[[rule]]\nid = "x"\nregex = "a"\nkeywords = ["A"]\n', "keyword"),
        (
            '[[rule]]\nid = "x"\nregex = "a"\nkeywords = ["a"]\n[[rule]]\nid = "x"\nregex = "b"\nkeywords = ["b"]\n',
            "duplicate",
        ),
        ('[[rule]]\nid = "Bad Id"\nregex = "a"\nkeywords = ["a"]\n', "id"),
        ('[[rule]]\nid = "x"\nregex = "a"\n', "keyword"),
        ('[[rule]]\nid = "x"\nregex = "a"\nkeywords = ["a"]\ncheck = "nope"\n', "check"),
        ("not toml [", "TOML"),
    ],
)
def test_bad_rules_raise_config_error(toml, message):
    with pytest.raises(ConfigError, match=message):
        load_rules(toml, "test.toml")


def test_regex_may_span_lines():
    compiled, _ = load_rules(
        '[[rule]]\nid = "x"\nregex = """\n  ab\n  (?P<secret>cd)\n"""\nkeywords = ["ab"]\n'
    )
    assert compiled[0].pattern == "ab(?P<secret>cd)"


def test_packaged_rules_json_is_the_parsed_toml(tmp_path: Path) -> None:
    """``rules.json`` (loaded instead of parsing the TOML at start-up) holds exactly what
    ``tomllib`` makes of the current ``rules.toml``; run ``make rules`` after editing it."""
    import hashlib
    import tomllib
    from importlib import resources

    import orjson

    from habitus.redact.engine import RULES_JSON, _packaged_rules_data, write_rules_json

    package = resources.files("habitus.redact")
    raw = package.joinpath("rules.toml").read_bytes()
    cached = orjson.loads(package.joinpath(RULES_JSON).read_bytes())
    assert cached["toml_sha256"] == hashlib.sha256(raw).hexdigest(), "rules.json is stale: run `make rules`"
    assert cached["rules"] == tomllib.loads(raw.decode("utf-8")) == _packaged_rules_data()
    assert write_rules_json(tmp_path).read_bytes() == package.joinpath(RULES_JSON).read_bytes()


@pytest.mark.parametrize("copy", ["stale", "corrupt", "missing"])
def test_a_rules_json_that_is_not_the_toml_is_ignored(tmp_path: Path, copy: str) -> None:
    """A ``rules.json`` made from other rules (edited TOML, copy not rewritten), a broken
    one or none: the TOML is parsed instead."""
    import tomllib
    from importlib import resources

    import orjson

    from habitus.redact.engine import RULES_JSON, _packaged_rules_data

    raw = resources.files("habitus.redact").joinpath("rules.toml").read_bytes()
    (tmp_path / "rules.toml").write_bytes(raw)
    if copy == "stale":
        (tmp_path / RULES_JSON).write_bytes(orjson.dumps({"toml_sha256": "0" * 64, "rules": {"rule": []}}))
    elif copy == "corrupt":
        (tmp_path / RULES_JSON).write_bytes(b'{"toml_sha256": ')
    assert _packaged_rules_data(tmp_path) == tomllib.loads(raw.decode("utf-8"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see https://x.example.com/v1?api_key=abcd1234efgh5678ijkl&x=1 ok", "see https://x.example.com/v1?api_key=[REDACTED:url-query-token]&x=1 ok"),
        ("https://h/p?a=1&client_secret=Zx9kLm2Qw8Rt&state=ok", "https://h/p?a=1&client_secret=[REDACTED:url-query-token]&state=ok"),
    ],
)
def test_a_query_parameter_secret_ends_at_the_next_parameter(text: str, expected: str) -> None:
    assert redact(text).text == expected


def test_an_unquoted_assignment_outside_a_url_keeps_its_ampersand_redacted() -> None:
    out = redact("PASSWORD=ab12cd&34efgh99zz").text
    assert out.startswith("PASSWORD=[REDACTED:") and "ab12cd" not in out and "34efgh" not in out
