"""Reference client for the brainstem brain sidecar and control plane (Python 3.8+).

Standard library only: copy this one file next to your tool or headless bot.

- Typed tick models (`Tick`, `Snapshot`, ...) and intent models (`MoveTo`, `Engage`, ...).
- `BrainClient.ticks()` sends every character's tick in one `POST /ticks` call and returns
  one reply per tick, in order (`Reply`, or `TickError` for a tick the sidecar refused).
- `signed_headers()` / `ControlPlaneClient` sign control-plane requests with a server key.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

#: Most ticks the sidecar takes in one /ticks call; longer lists are sent in several calls.
MAX_BATCH = 1024
#: Largest /ticks body the sidecar takes; a chunk is split further to stay under it.
MAX_BODY_BYTES = 4 * 1024 * 1024
#: Seconds a call may take before it fails; keep it under your cadence period.
DEFAULT_TIMEOUT_S = 2.0
DEFAULT_URL = "http://127.0.0.1:8088"
#: How the sidecar token travels: an Authorization bearer, an X-Brain-Token header, or ?token=.
TOKEN_FORMS = ("bearer", "header", "query")


# ---- tick models -------------------------------------------------------------------------

@dataclass
class Vec3:
    x: float
    y: float
    z: float

    def to_json(self) -> Dict[str, float]:
        return {"x": self.x, "y": self.y, "z": self.z}


@dataclass
class Target:
    id: int
    kind: str  # player | ai | zombie | animal
    pos: Vec3
    hostile: bool
    visible: bool
    name: Optional[str] = None
    health: Optional[float] = None

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"id": self.id, "kind": self.kind, "pos": self.pos.to_json(),
                               "hostile": self.hostile, "visible": self.visible}
        if self.name is not None:
            out["name"] = self.name
        if self.health is not None:
            out["health"] = self.health
        return out


@dataclass
class SelfState:
    pos: Vec3
    heading_deg: float
    health: float
    blood: float
    hunger: float
    thirst: float
    has_weapon: bool
    ammo: int

    def to_json(self) -> Dict[str, Any]:
        return {"pos": self.pos.to_json(), "heading_deg": self.heading_deg, "health": self.health,
                "blood": self.blood, "hunger": self.hunger, "thirst": self.thirst,
                "has_weapon": self.has_weapon, "ammo": self.ammo}


@dataclass
class Poi:
    id: str
    kind: str
    pos: Vec3

    def to_json(self) -> Dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "pos": self.pos.to_json()}


@dataclass
class Heard:
    from_: int  # the speaker's id (`from` on the wire)
    text: str
    at_s: float

    def to_json(self) -> Dict[str, Any]:
        return {"from": self.from_, "text": self.text, "at_s": self.at_s}


@dataclass
class Snapshot:
    agent: int
    time_s: float
    self_state: SelfState
    targets: List[Target] = field(default_factory=list)
    route: Optional[List[Vec3]] = None
    poi: Optional[List[Poi]] = None
    heard: Optional[List[Heard]] = None
    squad: Optional[str] = None

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"agent": self.agent, "time_s": self.time_s,
                               "self_state": self.self_state.to_json(),
                               "targets": [t.to_json() for t in self.targets]}
        if self.route is not None:
            out["route"] = [p.to_json() for p in self.route]
        if self.poi is not None:
            out["poi"] = [p.to_json() for p in self.poi]
        if self.heard is not None:
            out["heard"] = [h.to_json() for h in self.heard]
        if self.squad is not None:
            out["squad"] = self.squad
        return out


@dataclass
class Profile:
    name: Optional[str] = None
    role: Optional[str] = None  # survivor | bandit | guard | trader
    coward: Optional[bool] = None
    traits: Optional[Dict[str, float]] = None  # any subset, each 0..1

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {}
        if self.name is not None:
            out["name"] = self.name
        if self.role is not None:
            out["role"] = self.role
        if self.coward is not None:
            out["coward"] = self.coward
        if self.traits is not None:
            out["traits"] = dict(self.traits)
        return out


@dataclass
class Tick:
    snapshot: Snapshot
    profile: Profile = field(default_factory=Profile)

    def to_json(self) -> Dict[str, Any]:
        return {"snapshot": self.snapshot.to_json(), "profile": self.profile.to_json()}


# ---- intent models -----------------------------------------------------------------------

@dataclass
class MoveTo:
    to: Vec3
    speed: str  # walk | jog | sprint
    kind: str = "MoveTo"


@dataclass
class Engage:
    target: int
    fire: bool
    kind: str = "Engage"


@dataclass
class Say:
    text: str
    channel: str
    line_id: str
    kind: str = "Say"


@dataclass
class Face:
    yaw_deg: float
    kind: str = "Face"


@dataclass
class Flee:
    from_: int  # the threat's id (`from` on the wire)
    kind: str = "Flee"


@dataclass
class Investigate:
    at: Vec3
    kind: str = "Investigate"


@dataclass
class Emote:
    name: str
    kind: str = "Emote"


@dataclass
class Idle:
    reason: str
    kind: str = "Idle"


@dataclass
class Logoff:
    kind: str = "Logoff"


@dataclass
class UnknownIntent:
    """A kind this client does not know (a newer sidecar); a mod ignores it."""
    kind: str


Intent = Union[MoveTo, Engage, Say, Face, Flee, Investigate, Emote, Idle, Logoff, UnknownIntent]


@dataclass
class Reply:
    agent: int
    posture: str  # standing | crouched | prone
    intents: List[Intent]


@dataclass
class TickError:
    """A tick the sidecar refused; the other ticks of the batch were answered."""
    agent: int
    code: str
    message: str
    details: List[Dict[str, Any]] = field(default_factory=list)


# What a failure code means to a game-server owner: appended to the error's message.
_HINTS = {
    "unauthorized": " (the token is wrong or missing: use the brain token that `brainstem up` prints)",
    "network": " (is `brainstem up` running, and the URL right?)",
    "payload_too_large": " (too many characters in one batch)",
}


class BrainstemError(Exception):
    """A whole call failed: network, timeout, a 4xx/5xx for the request, or a malformed reply."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(f"{status} {code}: {message}{_HINTS.get(code, '')}")
        self.status = status
        self.code = code
        self.message = message


# ---- batch body and reply parsing (pure) -------------------------------------------------

def _encode(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


def build_batch(ticks: Sequence[Tick]) -> bytes:
    """The /ticks body: a JSON array of tick requests, UTF-8."""
    return _encode([t.to_json() for t in ticks])


def _vec(v: Any) -> Vec3:
    return Vec3(float(v["x"]), float(v["y"]), float(v["z"]))


def parse_intent(d: Dict[str, Any]) -> Intent:
    kind = d.get("kind")
    if kind == "MoveTo":
        return MoveTo(_vec(d["to"]), d["speed"])
    if kind == "Engage":
        return Engage(int(d["target"]), bool(d["fire"]))
    if kind == "Say":
        return Say(d["text"], d["channel"], d["line_id"])
    if kind == "Face":
        return Face(float(d["yaw_deg"]))
    if kind == "Flee":
        return Flee(int(d["from"]))
    if kind == "Investigate":
        return Investigate(_vec(d["at"]))
    if kind == "Emote":
        return Emote(d["name"])
    if kind == "Idle":
        return Idle(d["reason"])
    if kind == "Logoff":
        return Logoff()
    return UnknownIntent(str(kind))


def parse_reply(item: Any, sent: int) -> Union[Reply, TickError]:
    """One element of a /ticks reply (or a /tick reply) for the tick sent for agent `sent`."""
    if not isinstance(item, dict):
        raise BrainstemError(200, "bad_reply", f"the reply for agent {sent} is not an object")
    err = item.get("error")
    if isinstance(err, dict):
        return TickError(sent, str(err.get("code", "")), str(err.get("message", "")),
                         list(err.get("details") or []))
    try:
        return Reply(int(item["agent"]), str(item["posture"]), [parse_intent(i) for i in item["intents"]])
    except (KeyError, TypeError, ValueError) as e:
        raise BrainstemError(200, "bad_reply", f"malformed reply for agent {sent}: {e!r}") from None


def _json(body: Union[str, bytes]) -> Any:
    try:
        return json.loads(body)
    except ValueError as err:
        raise BrainstemError(200, "bad_reply", f"the reply is not JSON: {err}") from None


def parse_replies(body: Union[str, bytes], agents: Sequence[int]) -> List[Union[Reply, TickError]]:
    """Parses a /ticks reply for a batch sent for `agents` in that order."""
    items = _json(body)
    # ?errors=body answers a whole call's failure as a 200 with one error object.
    if isinstance(items, dict) and isinstance(items.get("error"), dict):
        raise BrainstemError(200, str(items["error"].get("code", "http_error")), str(items["error"].get("message", "")))
    if not isinstance(items, list) or len(items) != len(agents):
        raise BrainstemError(200, "bad_reply", f"expected an array of {len(agents)} replies")
    return [parse_reply(item, sent) for sent, item in zip(agents, items)]


def _chunks(ticks: Sequence[Tick]) -> List[Tuple[List[int], bytes]]:
    """Packs ticks, in order, into bodies of at most MAX_BATCH ticks and MAX_BODY_BYTES bytes."""
    out: List[Tuple[List[int], bytes]] = []
    agents: List[int] = []
    parts: List[bytes] = []
    size = 2  # the brackets
    for tick in ticks:
        part = _encode(tick.to_json())
        if parts and (len(parts) == MAX_BATCH or size + 1 + len(part) > MAX_BODY_BYTES):
            out.append((agents, b"[" + b",".join(parts) + b"]"))
            agents, parts, size = [], [], 2
        agents.append(tick.snapshot.agent)
        parts.append(part)
        size += len(part) + (1 if len(parts) > 1 else 0)
    if parts:
        out.append((agents, b"[" + b",".join(parts) + b"]"))
    return out


# ---- the sidecar client ------------------------------------------------------------------

def _error_of(status: int, raw: bytes) -> BrainstemError:
    """The documented error body {"error": {"code", "message"}} of a failed call."""
    try:
        err = json.loads(raw)["error"]
        return BrainstemError(status, str(err["code"]), str(err["message"]))
    except (ValueError, KeyError, TypeError):
        return BrainstemError(status, "http_error", raw[:200].decode("utf-8", "replace"))


def _network_error(err: Exception, timeout_s: float) -> BrainstemError:
    """No HTTP answer: `timeout` when the call ran out of time, else `network`."""
    reason = getattr(err, "reason", err)
    if isinstance(reason, (TimeoutError, socket.timeout)):
        return BrainstemError(0, "timeout", f"no answer within {timeout_s} s")
    return BrainstemError(0, "network", str(reason))


class BrainClient:
    """Calls the sidecar. One client per thread; every call blocks for at most `timeout_s`."""

    def __init__(self, url: str = DEFAULT_URL, token: Optional[str] = None,
                 token_form: str = "bearer", timeout_s: float = DEFAULT_TIMEOUT_S):
        if token_form not in TOKEN_FORMS:
            raise ValueError(f"token_form must be one of {TOKEN_FORMS}")
        self.url = url.rstrip("/")
        self.token = token
        self.token_form = token_form
        self.timeout_s = timeout_s

    def _request(self, method: str, path: str, body: Optional[bytes] = None) -> bytes:
        headers = {"Content-Type": "application/json"}
        if self.token is not None:
            if self.token_form == "bearer":
                headers["Authorization"] = f"Bearer {self.token}"
            elif self.token_form == "header":
                headers["X-Brain-Token"] = self.token
            else:
                path += ("&" if "?" in path else "?") + "token=" + urllib.parse.quote(self.token, safe="")
        req = urllib.request.Request(self.url + path, data=body, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as res:
                return res.read()
        except urllib.error.HTTPError as err:
            raise _error_of(err.code, err.read()) from None
        except (urllib.error.URLError, OSError) as err:
            raise _network_error(err, self.timeout_s) from None

    def health(self) -> bool:
        try:
            return self._request("GET", "/health") == b"ok"
        except BrainstemError:
            return False

    def ticks(self, ticks: Sequence[Tick]) -> List[Union[Reply, TickError]]:
        """One reply per tick, in order; more than MAX_BATCH ticks go in several calls."""
        out: List[Union[Reply, TickError]] = []
        for agents, body in _chunks(ticks):
            out.extend(parse_replies(self._request("POST", "/ticks", body), agents))
        return out

    def tick(self, tick: Tick) -> Reply:
        """One character alone (POST /tick); prefer ticks() for more than one."""
        raw = self._request("POST", "/tick", _encode(tick.to_json()))
        reply = parse_reply(_json(raw), tick.snapshot.agent)
        if isinstance(reply, TickError):
            raise BrainstemError(200, reply.code, reply.message)
        return reply


# ---- request signing (control plane) -----------------------------------------------------

def _bytes(body: Union[str, bytes, None]) -> bytes:
    if body is None:
        return b""
    return body.encode("utf-8") if isinstance(body, str) else body


def canonical_string(method: str, target: str, timestamp: int, body: Union[str, bytes, None] = b"") -> str:
    """METHOD, the target as sent (query included), unix seconds and hex SHA-256 of the body."""
    digest = hashlib.sha256(_bytes(body)).hexdigest()
    return f"{method.upper()}\n{target}\n{timestamp}\n{digest}"


def signature(key: str, method: str, target: str, timestamp: int, body: Union[str, bytes, None] = b"") -> str:
    """Hex HMAC-SHA256 keyed with the server key over the canonical string."""
    message = canonical_string(method, target, timestamp, body).encode("utf-8")
    return hmac.new(key.encode("utf-8"), message, hashlib.sha256).hexdigest()


def signed_headers(key: str, method: str, target: str, body: Union[str, bytes, None] = b"",
                   now: Optional[float] = None) -> Dict[str, str]:
    """The headers of a signed control-plane request; `now` is unix seconds (time.time())."""
    timestamp = int(time.time() if now is None else now)
    return {"Authorization": f"Bearer {key}", "X-Service-Timestamp": str(timestamp),
            "X-Service-Signature": signature(key, method, target, timestamp, body)}


class ControlPlaneClient:
    """Signed calls a server key may make: read its server's config, post its telemetry."""

    def __init__(self, url: str, server_id: str, server_key: str, timeout_s: float = 10.0):
        self.url = url.rstrip("/")
        self.server_id = server_id
        self.server_key = server_key
        self.timeout_s = timeout_s
        self._last_signature = ""

    def _send(self, method: str, target: str, body: Optional[bytes], extra: Dict[str, str]) -> Tuple[int, Dict[str, str], bytes]:
        # The control plane refuses a signature it has already seen (a replay), and the same
        # request in the same second signs the same: wait for the next second instead.
        now = time.time()
        sig = signature(self.server_key, method, target, int(now), body)
        if sig == self._last_signature:
            time.sleep(int(now) + 1 - now)
        headers = signed_headers(self.server_key, method, target, body)
        self._last_signature = headers["X-Service-Signature"]
        headers.update(extra)
        if body is not None:
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(self.url + target, data=body, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as res:
                return res.status, dict(res.headers.items()), res.read()
        except urllib.error.HTTPError as err:
            if err.code == 304:
                return 304, dict(err.headers.items()), b""
            raise _error_of(err.code, err.read()) from None
        except (urllib.error.URLError, OSError) as err:
            raise _network_error(err, self.timeout_s) from None

    def get_config(self, etag: Optional[str] = None) -> Tuple[Optional[Dict[str, Any]], Optional[str]]:
        """(bundle, ETag); bundle is None when `etag` is still current (304)."""
        target = "/v1/config?server=" + urllib.parse.quote(self.server_id, safe="")
        status, headers, raw = self._send("GET", target, None, {"If-None-Match": etag} if etag else {})
        tag = headers.get("ETag") or headers.get("etag")
        return (None, tag) if status == 304 else (json.loads(raw), tag)

    def post_telemetry(self, report: Dict[str, Any]) -> Dict[str, Any]:
        body = json.dumps(report, separators=(",", ":")).encode("utf-8")
        return json.loads(self._send("POST", "/v1/telemetry", body, {})[2])
