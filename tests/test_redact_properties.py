"""Property tests for redaction: every supported format is caught anywhere in prose.

Secrets are generated at run time from a seed (``random.Random``), following each vendor's
documented shape, so the repository holds no literal that a scanner would flag.
"""

from __future__ import annotations

import base64
import random
import re
import string
import uuid
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from habitus.redact import find_secrets, redact
from habitus.redact.engine import rules

ALNUM = string.ascii_letters + string.digits
UPPER_DIGIT = string.ascii_uppercase + string.digits
LOWER_DIGIT = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"

Build = Callable[[random.Random], tuple[str, str]]  # rng -> (snippet, secret part)
PLACEHOLDER = re.compile(r"\[REDACTED:[a-z0-9-]+(?::[0-9a-f]{8})?\]")


def tok(rng: random.Random, alphabet: str, n: int) -> str:
    """``n`` random characters of ``alphabet`` with at least one digit, upper and lower
    case letter where the alphabet has them (real keys look like that)."""
    while True:
        out = "".join(rng.choice(alphabet) for _ in range(n))
        wants = [
            cls
            for cls in (string.digits, string.ascii_uppercase, string.ascii_lowercase)
            if any(c in alphabet for c in cls)
        ]
        if n < 8 or all(any(c in cls for c in out) for cls in wants):
            return out


def digits(rng: random.Random, n: int) -> str:
    return str(rng.randint(1, 9)) + "".join(rng.choice(string.digits) for _ in range(n - 1))


def secret_only(prefix: str, alphabet: str, n: int, suffix: str = "") -> Build:
    def build(rng: random.Random) -> tuple[str, str]:
        s = prefix + tok(rng, alphabet, n) + suffix
        return s, s

    return build


def in_context(template: str, alphabet: str, n: int, prefix: str = "") -> Build:
    """``template`` with ``{}`` replaced by the secret (``prefix`` + random part)."""

    def build(rng: random.Random) -> tuple[str, str]:
        s = prefix + tok(rng, alphabet, n)
        return template.format(s), s

    return build


def password(rng: random.Random) -> str:
    return tok(rng, ALNUM, rng.randint(12, 20))


def with_password(template: str) -> Build:
    def build(rng: random.Random) -> tuple[str, str]:
        pw = password(rng)
        return template.format(pw), pw

    return build


def pem(rng: random.Random, kind: str = "RSA ") -> str:
    body = "\n".join(tok(rng, B64, 64) for _ in range(8)) + "\n" + tok(rng, B64, 20) + "=="
    return f"-----BEGIN {kind}PRIVATE KEY-----\n{body}\n-----END {kind}PRIVATE KEY-----"


def build_pem(rng: random.Random) -> tuple[str, str]:
    block = pem(rng, rng.choice(["RSA ", "", "EC ", "OPENSSH "]))
    return block, block


def build_pem_b64(rng: random.Random) -> tuple[str, str]:
    s = base64.b64encode(pem(rng).encode()).decode()
    return "PRIVATE_KEY_B64=" + s, s


def build_jwt(rng: random.Random) -> tuple[str, str]:
    s = "eyJ" + tok(rng, B64URL, 30) + ".eyJ" + tok(rng, B64URL, 60) + "." + tok(rng, B64URL, 43)
    return s, s


def build_teamcity(rng: random.Random) -> tuple[str, str]:
    head = base64.urlsafe_b64encode(b'{"typ": "TCV2"}').decode().rstrip("=")
    s = head + "." + tok(rng, B64URL, 36) + "." + tok(rng, B64URL, 48)
    return s, s


def build_uuid_ctx(template: str) -> Build:
    def build(rng: random.Random) -> tuple[str, str]:
        s = str(uuid.UUID(int=rng.getrandbits(128)))
        return template.format(s), s

    return build


def build_slack_webhook(rng: random.Random) -> tuple[str, str]:
    path = (
        "T"
        + tok(rng, UPPER_DIGIT, 8)
        + "/B"
        + tok(rng, UPPER_DIGIT, 10)
        + "/"
        + tok(rng, ALNUM, 24)
    )
    return "https://hooks.slack.com/services/" + path, path


def build_teams(rng: random.Random) -> tuple[str, str]:
    u = [str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(3)]
    path = f"{u[0]}@{u[1]}/IncomingWebhook/{tok(rng, HEX, 32)}/{u[2]}"
    return "https://contoso.webhook.office.com/webhookb2/" + path, path


def build_discord_webhook(rng: random.Random) -> tuple[str, str]:
    s = tok(rng, B64URL, 68)
    return f"https://discord.com/api/webhooks/{digits(rng, 18)}/{s}", s


def build_discord_bot(rng: random.Random) -> tuple[str, str]:
    s = "M" + tok(rng, B64URL, 25) + "." + tok(rng, B64URL, 6) + "." + tok(rng, B64URL, 38)
    return "discord bot token " + s, s


def build_slack_token(rng: random.Random) -> tuple[str, str]:
    s = "xoxb-" + digits(rng, 12) + "-" + digits(rng, 13) + "-" + tok(rng, ALNUM, 24)
    return s, s


def build_telegram(rng: random.Random) -> tuple[str, str]:
    s = digits(rng, 10) + ":AA" + tok(rng, B64URL, 33)
    return s, s


def build_github(rng: random.Random) -> tuple[str, str]:
    if rng.random() < 0.5:
        s = rng.choice(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]) + tok(rng, ALNUM, 36)
    else:
        s = "github_pat_" + tok(rng, ALNUM, 22) + "_" + tok(rng, ALNUM, 59)
    return s, s


def build_openai(rng: random.Random) -> tuple[str, str]:
    kind = rng.randrange(3)
    if kind == 0:
        s = rng.choice(["sk-proj-", "sk-svcacct-", "sk-admin-"]) + tok(rng, B64URL, 80)
    elif kind == 1:
        s = "sk-" + tok(rng, ALNUM, 20) + "T3BlbkFJ" + tok(rng, ALNUM, 20)
    else:
        s = "sk-" + tok(rng, ALNUM, 48)
    return "OPENAI_API_KEY=" + s, s


def build_anthropic(rng: random.Random) -> tuple[str, str]:
    kind = rng.choice(["api03", "admin01", "oat01", "ort01"])
    s = f"sk-ant-{kind}-" + tok(rng, B64URL, 93) + "AA"
    return s, s


def build_salesforce(rng: random.Random) -> tuple[str, str]:
    s = "00D" + tok(rng, ALNUM, 12) + "!" + tok(rng, ALNUM + "._", 96)
    return s, s


def build_azure_storage(rng: random.Random) -> tuple[str, str]:
    s = tok(rng, B64, 86) + "=="
    text = f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={s};EndpointSuffix=core.windows.net"
    return text, s


def build_azure_identifiable(rng: random.Random) -> tuple[str, str]:
    s = tok(rng, B64, 76) + "+ASt" + tok(rng, B64, 5) + "A=="
    return "storage key " + s, s


def build_azure_client_secret(rng: random.Random) -> tuple[str, str]:
    s = tok(rng, ALNUM, 3) + rng.choice(string.digits) + "Q~" + tok(rng, ALNUM + "_~.-", 34)
    return "client secret " + s + " here", s


def build_secret_prose(rng: random.Random) -> tuple[str, str]:
    s = tok(rng, LOWER_DIGIT, 10) + digits(rng, 4) + tok(rng, ALNUM, 8)
    word = rng.choice(["password is", "token", "secret is", "api key is", "passphrase", "pw is", "pwd", "pass"])
    return f"my {word} {s} for the dev box", s


def build_secret_prose_zh(rng: random.Random) -> tuple[str, str]:
    s = tok(rng, LOWER_DIGIT, 10) + digits(rng, 4) + tok(rng, ALNUM, 8)
    word = rng.choice(["数据库密码是 ", "口令 ", "密钥：", "令牌为", "密码="])
    return f"记住，{word}{s}，以后都用它登录", s


def build_sshpass(rng: random.Random) -> tuple[str, str]:
    s = tok(rng, ALNUM, 14)
    return f"sshpass -p {s} ssh deploy@host", s


def build_aws_secret(rng: random.Random) -> tuple[str, str]:
    s = tok(rng, B64, 40)
    key_id = "AKIA" + "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(16))
    return rng.choice(["aws_secret_access_key = " + s, f"creds: {key_id} / {s}", f"{key_id} - {s}"]), s


FORMATS: dict[str, Build] = {
    "anthropic-api-key": build_anthropic,
    "openai-api-key": build_openai,
    "openrouter-api-key": secret_only("sk-or-v1-", HEX, 64),
    "groq-api-key": secret_only("gsk_", ALNUM, 52),
    "xai-api-key": secret_only("xai-", ALNUM, 80),
    "replicate-api-token": secret_only("r8_", ALNUM, 37),
    "perplexity-api-key": secret_only("pplx-", ALNUM, 48),
    "huggingface-token": secret_only("hf_", string.ascii_letters, 34),
    "jina-api-key": secret_only("jina_", ALNUM, 60),
    "tavily-api-key": secret_only("tvly-", ALNUM, 32),
    "firecrawl-api-key": secret_only("fc-", HEX, 32),
    "langsmith-api-key": in_context("LANGSMITH_KEY lsv2_pt_{}_" + "0123456789", HEX, 32),
    "pinecone-api-key": (
        lambda rng: (lambda s: (s, s))("pcsk_" + tok(rng, ALNUM, 5) + "_" + tok(rng, ALNUM, 60))
    ),
    "mistral-api-key": in_context("MISTRAL_API_KEY={}", ALNUM, 32),
    "deepseek-api-key": in_context("DEEPSEEK_API_KEY={}", HEX, 32, prefix="sk-"),
    "cohere-api-key": in_context("COHERE_API_KEY={}", ALNUM, 40),
    "aws-access-key-id": secret_only("AKIA", UPPER_DIGIT, 16),
    "aws-secret-access-key": build_aws_secret,
    "google-api-key": secret_only("AIza", B64URL, 35),
    "google-oauth": secret_only("GOCSPX-", B64URL, 28),
    "azure-storage-key": build_azure_storage,
    "azure-connection-secret": in_context(
        "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey={}=",
        B64,
        43,
    ),
    "azure-sas-signature": in_context(
        "https://acct.blob.core.windows.net/c?sv=2022-11-02&sp=r&sig={}%3D", ALNUM, 43
    ),
    "azure-identifiable-key": build_azure_identifiable,
    "azure-devops-pat": secret_only("", ALNUM, 76, suffix="AZDO" + "Xy12"),
    "azure-client-secret": build_azure_client_secret,
    "digitalocean-token": secret_only("dop_v1_", HEX, 64),
    "heroku-api-key": secret_only("HRKU-", B64URL, 60),
    "cloudflare-api-token": in_context("CLOUDFLARE_API_TOKEN={}", ALNUM, 40),
    "vercel-token": in_context("VERCEL_TOKEN={}", ALNUM, 24),
    "supabase-token": secret_only("sbp_", HEX, 40),
    "databricks-token": secret_only("dapi", HEX, 32),
    "vault-token": secret_only("hvs.", B64URL, 90),
    "vault-unseal-key": in_context("Unseal Key 1: {}", B64, 44),
    "terraform-cloud-token": (
        lambda rng: (lambda s: (s, s))(tok(rng, ALNUM, 14) + ".atlasv1." + tok(rng, B64URL, 67))
    ),
    "doppler-token": secret_only("dp.pt.", ALNUM, 43),
    "onepassword-service-token": secret_only("ops_eyJ", B64, 200),
    "github-token": build_github,
    "gitlab-token": secret_only("glpat-", B64URL, 20),
    "atlassian-api-token": secret_only("ATATT3xFfGF0", B64URL, 170, suffix="=" + "6FC1A2B3"),
    "npm-token": secret_only("npm_", ALNUM, 36),
    "pypi-token": secret_only("pypi-AgEIcHlwaS5vcmc", B64URL, 150),
    "rubygems-api-key": secret_only("rubygems_", HEX, 48),
    "cratesio-token": secret_only("cio", ALNUM, 32),
    "nuget-api-key": secret_only("oy2", LOWER_DIGIT, 43),
    "dockerhub-token": secret_only("dckr_pat_", B64URL, 27),
    "artifactory-token": secret_only("AKCp", ALNUM, 69),
    "sonarqube-token": secret_only("sqp_", HEX, 40),
    "sgp-token": secret_only("sgp_", HEX, 40),
    "postman-api-key": (
        lambda rng: (lambda s: (s, s))("PMAK-" + tok(rng, HEX, 24) + "-" + tok(rng, HEX, 34))
    ),
    "sentry-token": secret_only("sntryu_", HEX, 64),
    "linear-api-key": secret_only("lin_api_", ALNUM, 40),
    "notion-token": secret_only("ntn_", ALNUM, 46),
    "dependency-track-api-key": secret_only("odt_", ALNUM, 32),
    "teamcity-token": build_teamcity,
    "jenkins-initial-password": in_context(
        "Please use the following password to proceed to installation:\n\n{}\n", HEX, 32
    ),
    "slack-token": build_slack_token,
    "slack-webhook": build_slack_webhook,
    "msteams-webhook": build_teams,
    "discord-webhook": build_discord_webhook,
    "discord-bot-token": build_discord_bot,
    "telegram-bot-token": build_telegram,
    "twilio-key": in_context("twilio api key {}", HEX, 32, prefix="SK"),
    "sendgrid-api-key": (
        lambda rng: (lambda s: (s, s))("SG." + tok(rng, B64URL, 22) + "." + tok(rng, B64URL, 43))
    ),
    "mailgun-api-key": secret_only("key-", HEX, 32),
    "mailchimp-api-key": secret_only("", HEX, 32, suffix="-us12"),
    "postmark-token": build_uuid_ctx("POSTMARK_SERVER_TOKEN={}"),
    "stripe-key": secret_only("sk_live_", ALNUM, 24),
    "shopify-token": secret_only("shpat_", HEX, 32),
    "square-token": secret_only("sq0atp-", B64URL, 22),
    "salesforce-access-token": build_salesforce,
    "facebook-access-token": secret_only("EAA", ALNUM, 120),
    "twitter-bearer-token": secret_only("A" * 22, ALNUM + "%", 80),
    "figma-token": secret_only("figd_", B64URL, 40),
    "mapbox-secret-token": (
        lambda rng: (lambda s: (s, s))("sk.eyJ" + tok(rng, B64URL, 60) + "." + tok(rng, B64URL, 22))
    ),
    "adafruit-io-key": secret_only("aio_", ALNUM, 28),
    "adobe-client-secret": secret_only("p8e-", B64URL, 32),
    "aws-appsync-api-key": secret_only("da2-", LOWER_DIGIT, 26),
    "dropbox-token": secret_only("sl.", B64URL, 135),
    "dynatrace-token": (
        lambda rng: (lambda s: (s, s))(
            "dt0c01." + tok(rng, UPPER_DIGIT, 24) + "." + tok(rng, UPPER_DIGIT, 64)
        )
    ),
    "grafana-token": (
        lambda rng: (lambda s: (s, s))("glsa_" + tok(rng, ALNUM, 32) + "_" + tok(rng, HEX, 8))
    ),
    "newrelic-key": secret_only("NRAK-", UPPER_DIGIT, 27),
    "okta-api-token": in_context("okta token {}", ALNUM, 40, prefix="00"),
    "twitch-stream-key": (
        lambda rng: (lambda s: (s, s))("live_" + digits(rng, 9) + "_" + tok(rng, ALNUM, 30))
    ),
    "stackhawk-api-key": (
        lambda rng: (lambda s: (s, s))("hawk." + tok(rng, B64URL, 20) + "." + tok(rng, B64URL, 20))
    ),
    "age-secret-key": secret_only("AGE-SECRET-KEY-1", BECH32, 58),
    "thingsboard-access-token": in_context(
        "https://thingsboard.cloud/api/v1/{}/telemetry", LOWER_DIGIT, 20
    ),
    "truenas-api-key": in_context("call with api_key 1-{}", ALNUM, 64),
    "private-key": build_pem,
    "private-key-base64": build_pem_b64,
    "jwt": build_jwt,
    "db-connection-string": with_password("postgres://app:{}@db.internal:5432/app"),
    "credentialed-url": with_password("https://deploy:{}@git.internal/repo.git"),
    "connection-string-password": with_password("Server=db;Database=app;User Id=app;Password={};"),
    "url-query-password": with_password("https://intranet.local/login?user=bob&password={}"),
    "url-query-token": in_context("https://api.vendor.io/v1/items?access_token={}", ALNUM, 32),
    "authorization-header": in_context("Authorization: Token {}", ALNUM, 32),
    "bearer-token": in_context("send it with bearer {} then", ALNUM, 40),
    "netrc-password": with_password("machine api.vendor.io login bob password {}"),
    "cli-user-password": with_password("curl -u bob:{} https://api.vendor.io"),
    "cli-password-flag": with_password("docker login -u bob -p {}"),
    "cli-secret-option": with_password("mysql --host db --password={} app"),
    "password-in-code": with_password('new NetworkCredential("bob", "{}");'),
    "password-prose": with_password('the password for bob is "{}" today'),
    "secret-prose": build_secret_prose,
    "secret-prose-zh": build_secret_prose_zh,
    "sshpass-password": build_sshpass,
    "xml-secret-value": with_password('<add key="SmtpPassword" value="{}"/>'),
    "secret-assignment": with_password('DB_PASSWORD="{}"'),
    "email": (
        lambda rng: (lambda s: (s, s))(
            "".join(rng.choice(string.ascii_lowercase) for _ in range(8)) + "@mail.example.org"
        )
    ),
}

WORDS = (
    "the a an of to in on and or but with we you it is was be this that from by as at up "
    "habit agent review commit branch merge file line read write run build deploy ship "
    "quick brown fox jumps over lazy dog note plan ask tell show fix bug feature small "
    "large fast slow green blue red one two three four five six seven eight nine ten "
    "tests lint format docs readme change update remove add rename move copy open close"
).split()


@st.composite
def prose(draw: st.DrawFn, max_words: int = 40) -> str:
    """Text from a safe vocabulary: words, numbers and light punctuation, no secrets."""
    parts = draw(
        st.lists(
            st.one_of(
                st.sampled_from(WORDS),
                st.integers(0, 100000).map(str),
                st.sampled_from([".", ",", ";", "!", "?", "(", ")", "-", ":", "\n", "\n\n"]),
            ),
            max_size=max_words,
        )
    )
    return " ".join(parts)


def _runs(secret: str) -> list[str]:
    return [secret] if len(secret) < 8 else [secret[i : i + 8] for i in range(len(secret) - 7)]


def test_every_rule_has_a_generator():
    assert set(FORMATS) == {r.id for r in rules()}


FAST = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("rule_id", sorted(FORMATS))
@FAST
@given(seed=st.integers(0, 2**32 - 1), before=prose(), after=prose())
def test_secret_in_prose_is_redacted(rule_id, seed, before, after):
    snippet, secret = FORMATS[rule_id](random.Random(seed))
    text = f"{before}\n{snippet}\n{after}"
    out = redact(text, pii=rule_id == "email")
    assert out.changed
    assert rule_id in find_secrets(text) or rule_id == "email"
    leftover = PLACEHOLDER.sub("", out.text)
    assert not any(run in leftover for run in _runs(secret)), out.text
    again = redact(out.text, pii=rule_id == "email")
    assert again.text == out.text
    assert find_secrets(out.text) == []


@settings(max_examples=150, deadline=None)
@given(text=prose(max_words=200))
def test_prose_without_secrets_is_unchanged(text):
    out = redact(text, pii=True)
    assert out.text == text
    assert not out.changed
    assert find_secrets(text) == []


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=300))
def test_any_text_is_idempotent_and_agrees_with_find_secrets(text):
    out = redact(text)
    assert redact(out.text).text == out.text
    assert bool(find_secrets(text)) == out.changed
    assert find_secrets(out.text) == []


@settings(max_examples=60, deadline=None)
@given(seeds=st.lists(st.integers(0, 2**32 - 1), min_size=2, max_size=5), glue=prose(8))
def test_several_secrets_together_are_idempotent(seeds, glue):
    ids = sorted(FORMATS)
    pieces = []
    for seed in seeds:
        rng = random.Random(seed)
        snippet, _ = FORMATS[ids[seed % len(ids)]](rng)
        pieces.append(snippet)
    text = (" " + glue + " ").join(pieces)
    out = redact(text, tag_key=b"k")
    assert redact(out.text, tag_key=b"k").text == out.text
    assert find_secrets(out.text) == []
