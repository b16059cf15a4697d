"""A planted-credential corpus with values drawn at test time: one session holding the credentials
real sessions hold, in the places they turn up (a pasted key, `env` output, `cat .env`, a curl
header, a private key read with the read tool, an `.npmrc` token in a `!` command, a compaction
summary, a JWT in an assistant message, an Azure connection string, a session name, a label...),
plus look-alikes that must stay readable.

`planted(rng)` gives the credentials (kind, value, the text around it); `lookalikes(rng)` the
readable texts; `write_session(...)` one Pi session holding them all, with a recorded ESC[2J,
OSC title and BEL in an old bash output.
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass
from pathlib import Path

from builder import SessionBuilder

ALNUM = string.ascii_letters + string.digits
ESCAPES = "\x1b[2J\x1b]0;pwned title\x07\x07\x1b[31m"  # clear screen, OSC title, BEL, colour


@dataclass(frozen=True)
class Planted:
    kind: str
    value: str
    text: str  # the recorded text holding it
    place: str  # where in a session it goes: user, bash, read, assistant, compaction, ...


def _s(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    # Both cases and a digit, as generated keys have (rules may ask for them)
    while True:
        out = "".join(rng.choice(alphabet) for _ in range(n))
        if alphabet != ALNUM or (any(c.isdigit() for c in out) and any(c.isupper() for c in out)
                                 and any(c.islower() for c in out)):
            return out


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _jwt(rng: random.Random) -> str:
    head = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = _b64url(json.dumps({"sub": _s(rng, 10), "exp": rng.randrange(10**9, 2 * 10**9)}).encode())
    return f"{head}.{body}.{_s(rng, 43, ALNUM + '-_')}"


def _pem(rng: random.Random) -> str:
    lines = [_s(rng, 64, ALNUM + "+/") for _ in range(6)]
    return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END OPENSSH PRIVATE KEY-----"


def planted(rng: random.Random) -> list[Planted]:
    b64 = ALNUM + "+/"
    aws_id = "AKIA" + _s(rng, 16, string.ascii_uppercase + string.digits)
    aws_secret = _s(rng, 40, b64)
    db_pass = _s(rng, 18)
    openai = "sk-proj-" + _s(rng, 48, ALNUM + "_-")
    anthropic = "sk-ant-api03-" + _s(rng, 93, ALNUM + "_-")
    ghp = "ghp_" + _s(rng, 36)
    gh_fine = "github_pat_" + _s(rng, 22) + "_" + _s(rng, 59)
    glpat = "glpat-" + _s(rng, 20, ALNUM + "_-")
    google = "AIza" + _s(rng, 35, ALNUM + "_-")
    slack = "xoxb-" + "".join(rng.choice(string.digits) for _ in range(12)) + "-" + _s(rng, 24)
    stripe = "sk_live_" + _s(rng, 24)
    npm = "npm_" + _s(rng, 36)
    hf = "hf_" + _s(rng, 34)
    azure_key = _s(rng, 86, b64) + "=="
    jwt = _jwt(rng)
    pem = _pem(rng)
    env_secret = _s(rng, 32)
    api_key = _s(rng, 28)
    password = _s(rng, 14)
    bearer = _s(rng, 40, ALNUM + "._-")
    url_pass = _s(rng, 16)
    toml_token = _s(rng, 32)
    sigil_pass = rng.choice("$#*!@%&") + _s(rng, 12) + rng.choice("!?.#")
    hash_pass = _s(rng, 14)
    semi_pass = _s(rng, 7) + rng.choice(";,") + _s(rng, 5)
    bracket_pass = _s(rng, 6) + "[" + _s(rng, 4) + "](" + _s(rng, 3) + ")"
    caps_token = _s(rng, 22, string.ascii_uppercase)
    words = ["Secret", "Pass", "Blue", "Horse", "Staple"]
    words_pass = ("my-" + "-".join(rng.choice(words) for _ in range(2)) + "-"
                  + "".join(rng.choice(string.digits) for _ in range(3)))
    user_pass = f"{_s(rng, 5, string.ascii_lowercase)}:{_s(rng, rng.randrange(4, 30))}"
    basic = base64.b64encode(user_pass.encode()).decode()
    oauth_ghp = "ghp_" + _s(rng, 36)
    x_basic_ghp = "ghp_" + _s(rng, 36)
    redis_pass = _s(rng, 20)
    db_pass_short = _s(rng, 12)
    smtp_pass = _s(rng, 10)
    key_base = "".join(rng.choice("0123456789abcdef") for _ in range(64))
    json_pass = _s(rng, 14)
    basic_unpadded = base64.b64encode(f"{_s(rng, 5, string.ascii_lowercase)}:{_s(rng, 6)}".encode()
                                      ).decode().rstrip("=")
    while len(basic_unpadded) % 4 == 0:  # always unpadded
        basic_unpadded = base64.b64encode(f"u:{_s(rng, rng.randrange(4, 12))}".encode()
                                          ).decode().rstrip("=")
    return [
        Planted("openai-key", openai, f"here is my key {openai} please set it up", "user"),
        Planted("aws-access-key-id", aws_id,
                f"HOME=/home/dev\nAWS_ACCESS_KEY_ID={aws_id}\nAWS_SECRET_ACCESS_KEY={aws_secret}\n"
                f"DATABASE_URL=postgres://app:{db_pass}@db.internal:5432/app\nSHELL=/bin/bash", "bash"),
        Planted("aws-secret-access-key", aws_secret, "", "bash"),
        Planted("connection-string", db_pass, "", "bash"),
        Planted("generic-secret", env_secret,
                f"# .env\nNODE_ENV=production\nSTRIPE_KEY={stripe}\nSESSION_SECRET={env_secret}\n"
                f"HF_TOKEN={hf}\nPORT=3000", "read"),
        Planted("stripe-key", stripe, "", "read"),
        Planted("huggingface-token", hf, "", "read"),
        Planted("github-token", ghp,
                f"curl -H 'Authorization: Bearer {ghp}' https://api.github.com/user", "tool.call"),
        Planted("private-key", pem, pem + "\n", "read"),
        Planted("npm-token", npm,
                f"echo '//registry.npmjs.org/:_authToken={npm}' >> ~/.npmrc", "bang"),
        Planted("anthropic-key", anthropic,
                f"We rotated the leaked key {anthropic} and moved it to the vault.", "compaction"),
        Planted("jwt", jwt, f"The session cookie was `{jwt}`, which decodes to user 42.", "assistant"),
        Planted("azure-storage-key", azure_key,
                "DefaultEndpointsProtocol=https;AccountName=prodstore;"
                f"AccountKey={azure_key};EndpointSuffix=core.windows.net", "bash"),
        Planted("github-token", gh_fine, f"GITHUB_TOKEN={gh_fine} gh pr list", "bang"),
        Planted("gitlab-token", glpat, f"git remote set-url origin https://oauth2:{glpat}@gitlab.com/x/y",
                "tool.call"),
        Planted("google-api-key", google, f'{{"apiKey": "{google}", "authDomain": "x.firebaseapp.com"}}',
                "read"),
        Planted("slack-token", slack, f"slack token is {slack}", "branch"),
        Planted("generic-secret", api_key, f'api_key: "{api_key}"\nregion: eu-west-1', "read"),
        Planted("password", password, f"[database]\nuser = \"app\"\npassword = \"{password}\"", "read"),
        Planted("bearer-token", bearer, f"Authorization: Bearer {bearer}", "custom"),
        Planted("connection-string", url_pass, f"mongodb+srv://admin:{url_pass}@cluster0.example.net/db",
                "name"),
        Planted("generic-secret", toml_token, f'[registry]\ntoken = "{toml_token}"', "label"),
        # issue 38: a sigil first, `;`/`,`/brackets inside, all capitals, placeholder-like words with
        # digits, a short Basic credential, a known shape behind a name that is not one's own
        Planted("password", sigil_pass, f'PASSWORD="{sigil_pass}" ./start.sh', "user"),
        Planted("password", "#" + hash_pass, f"DB_HOST=db\nDB_PASSWORD=#{hash_pass}\nDB_PORT=5432", "bash"),
        Planted("password", semi_pass, f"mysql --password={semi_pass} -h db", "tool.call"),
        Planted("password", bracket_pass, f"password={bracket_pass}", "assistant"),
        Planted("generic-secret", caps_token, f"export API_TOKEN={caps_token}", "bang"),
        Planted("password", words_pass, f'password="{words_pass}"', "read"),
        Planted("basic-auth", basic, f"curl -H 'Authorization: Basic {basic}' https://x.example",
                "tool.call"),
        Planted("github-token", oauth_ghp, f"oauth_bearer {oauth_ghp}", "custom"),
        Planted("github-token", x_basic_ghp, f"x-basic {x_basic_ghp}", "assistant"),
        # issue 47: no user name before the password, a name that goes on after its secret word,
        # `_PASS`, JSON with escaped quotes inside a command, Basic without its padding
        Planted("connection-string", redis_pass, f"redis-cli -u redis://:{redis_pass}@cache:6379 ping",
                "tool.call"),
        Planted("password", db_pass_short, f"DB_HOST=db\nDB_PASS={db_pass_short}\nDB_NAME=app", "read"),
        Planted("password", smtp_pass, f"export SMTP_PASS={smtp_pass}", "bang"),
        Planted("generic-secret", key_base, f"SECRET_KEY_BASE={key_base} bin/rails s", "tool.call"),
        Planted("password", json_pass,
                f'curl -d "{{\\"user\\":\\"app\\",\\"password\\":\\"{json_pass}\\"}}" https://x',
                "tool.call"),
        Planted("basic-auth", basic_unpadded, f"Authorization: Basic {basic_unpadded}", "custom"),
    ]


def lookalikes(rng: random.Random) -> list[str]:
    """Texts that hold no credential and must come back unchanged."""
    sha = "".join(rng.choice("0123456789abcdef") for _ in range(40))
    uuid = "-".join("".join(rng.choice("0123456789abcdef") for _ in range(n)) for n in (8, 4, 4, 4, 12))
    integrity = "sha512-" + _s(rng, 86, ALNUM + "+/") + "=="
    digest = "sha256:" + "".join(rng.choice("0123456789abcdef") for _ in range(64))
    return [
        f"commit {sha}\nAuthor: dev <dev@example.com>",
        f"session {uuid} started",
        f'"integrity": "{integrity}"',
        f"FROM node@{digest}",
        "const token = process.env.GITHUB_TOKEN;",
        'OPENAI_API_KEY=your-api-key-here\nAWS_SECRET_ACCESS_KEY=<your-secret>',
        "export function createAuthenticatedRequestHandlerWithRetryAndExponentialBackoff() {}",
        "/home/dev/proj/node_modules/@types/node/crypto.d.ts:1234",
        "password: string; token?: string | null",
        "max_tokens = 4096; inputTokens: 1200",
        "git clone git@github.com:owner/repo.git",
        "SECRET_KEY = os.environ['SECRET_KEY']",
        "https://registry.npmjs.org/react/-/react-18.2.0.tgz",
        "const apiKey = config.get('apiKey')",
        # issue 38: the shapes the wider rules must leave alone
        "basic usage: run `make` first",
        "PASSWORD=$DB_PASSWORD ./start.sh",
        "password: ${{ secrets.DB_PASSWORD }}",
        "const token = getToken(request);",
        "API_TOKEN=YOUR_API_TOKEN_HERE",
        "password=my-password-here",
        "token: Optional[str] = None,",
        "Authorization: Basic realm=restricted",
        # issue 47: names that go on after a secret word, and `_pass` in code
        "token_count = 4096; first_pass = True",
        "DB_PASSWORD_FILE=/run/secrets/db_password",
        "password_confirmation: string",
        "redis://localhost:6379/0",
    ]


def write_session(sessions_dir: Path, cwd: str, rng: random.Random) -> tuple[SessionBuilder, list[Planted],
                                                                              list[str]]:
    """One session with every planted credential in its place and every look-alike in a user
    message of its own; an old bash output carries escape sequences."""
    sb = SessionBuilder(sessions_dir, cwd)
    items = planted(rng)
    looks = lookalikes(rng)
    sb.model_change()
    first = sb.user("set up the deploy pipeline for zephyrine")
    for n, p in enumerate(items):
        if not p.text:
            continue
        call = f"call_{n}"
        if p.place == "user":
            sb.user(p.text)
        elif p.place == "bash":
            sb.assistant(tool_calls=[(call, "bash", {"command": "env"})])
            sb.tool_result(call, "bash", p.text)
        elif p.place == "read":
            sb.assistant(tool_calls=[(call, "read", {"path": f"{cwd}/.env"})])
            sb.tool_result(call, "read", p.text)
        elif p.place == "tool.call":
            sb.assistant(tool_calls=[(call, "bash", {"command": p.text})])
            sb.tool_result(call, "bash", "ok")
        elif p.place == "bang":
            sb.bash(p.text, "")
        elif p.place == "compaction":
            sb.compaction(p.text, first)
        elif p.place == "assistant":
            sb.assistant(p.text)
        elif p.place == "branch":
            sb.branch_summary(first, p.text)
        elif p.place == "custom":
            sb.custom_message("http-log", p.text)
        elif p.place == "name":
            sb.session_info(p.text)
        elif p.place == "label":
            sb.label(first, p.text)
    for text in looks:
        sb.user(text)
    sb.bash("npm run build", f"building zephyrine{ESCAPES} done\ttabbed\n")
    return sb, items, looks


def write_hostile_fields(sessions_dir: Path, proj: Path, rng: random.Random) -> tuple[list[str], str]:
    """A session whose recorded strings outside any text hold credentials and escape sequences: its
    cwd, a tool's name, an entry id, a file path a call read. Returns the values that must not
    show, and the escape planted with them."""
    cwd_key, tool_key, id_key, path_key = ("ghp_" + _s(rng, 36) for _ in range(4))
    escape = "\x1b]0;owned\x07\x1b[2J"
    # flat: Pi's own directory for a session is named after its cwd (paths to Pi's files are shown
    # as they are, for opening them)
    sb = SessionBuilder(sessions_dir, str(proj / f"{cwd_key}{escape}"), flat=True)
    sb.user("hostile fields zephyrine")
    real = sb.new_id
    sb.new_id = lambda: id_key  # type: ignore[method-assign]
    sb.assistant(tool_calls=[("call_h", f"{tool_key}{escape}", {"path": f"/srv/{path_key}{escape}/x"})])
    sb.new_id = real  # type: ignore[method-assign]
    sb.tool_result("call_h", f"{tool_key}{escape}", "hostile fields done")
    sb.assistant(tool_calls=[("call_r", "read", {"path": f"/srv/{path_key}{escape}/x"})])
    sb.tool_result("call_r", "read", "zephyrine contents")
    return [cwd_key, tool_key, id_key, path_key], escape


# The six shapes issue 47 added (docs/security.md): each recorded text holds one of these.
ISSUE47_SHAPES = ("redis://:", "DB_PASS=", "SMTP_PASS=", "SECRET_KEY_BASE=", '\\"password\\":\\"',
                  "Authorization: Basic ")


def issue47_six(items: list[Planted]) -> list[Planted]:
    """The planted credentials of issue 47's six shapes (Basic: the unpadded one, alone on its
    line; the padded one sits in a curl header)."""
    return [p for p in items if any(shape in p.text for shape in ISSUE47_SHAPES)
            and not p.text.startswith("curl -H")]


def oracle_token(rng: random.Random) -> str:
    """A GitHub token's shape, as a file name would hold it (`keys/ghp_….txt`)."""
    return "ghp_" + "".join(rng.choice(ALNUM) for _ in range(33)) + "a1Z"


def oracle_other(token: str) -> str:
    """Another value of the same shape: the path oracle answers it exactly as `token`."""
    return token[:-4] + ("b2Y9" if token[-4:] != "b2Y9" else "c3X8")


def write_file_session(sessions: Path, proj: Path, name: str) -> None:
    """A session that wrote `keys/<name>.txt` in `proj`: its path holds a credential's shape."""
    sb = SessionBuilder(sessions, str(proj))
    sb.user("store the deploy key quillwort")
    sb.assistant(tool_calls=[("call_w", "write", {"path": f"keys/{name}.txt", "content": "x"})])
    sb.tool_result("call_w", "write", "written")
