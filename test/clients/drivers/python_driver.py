"""Drives clients/python/brainstem_client.py for test/clients/python.test.ts.

Usage: python3 python_driver.py CLIENT_DIR COMMAND ARGS... ; prints JSON on stdout.
"""
import dataclasses
import json
import sys

sys.path.insert(0, sys.argv[1])
import brainstem_client as bc  # noqa: E402


def vec(d):
    return bc.Vec3(d["x"], d["y"], d["z"])


def tick_of(d):
    s = d["snapshot"]
    st = s["self_state"]
    snap = bc.Snapshot(
        agent=s["agent"], time_s=s["time_s"],
        self_state=bc.SelfState(vec(st["pos"]), st["heading_deg"], st["health"], st["blood"], st["hunger"],
                                st["thirst"], st["has_weapon"], st["ammo"]),
        targets=[bc.Target(t["id"], t["kind"], vec(t["pos"]), t["hostile"], t["visible"], t.get("name"), t.get("health"))
                 for t in s["targets"]],
        route=[vec(p) for p in s["route"]] if "route" in s else None,
        poi=[bc.Poi(p["id"], p["kind"], vec(p["pos"])) for p in s["poi"]] if "poi" in s else None,
        heard=[bc.Heard(h["from"], h["text"], h["at_s"]) for h in s["heard"]] if "heard" in s else None,
        squad=s.get("squad"))
    p = d["profile"]
    return bc.Tick(snap, bc.Profile(p.get("name"), p.get("role"), p.get("coward"), p.get("traits")))


def normal(reply):
    if isinstance(reply, bc.TickError):
        return {"agent": reply.agent, "error": {"code": reply.code, "message": reply.message}}
    intents = []
    for i in reply.intents:
        d = {"kind": i.kind}
        for f in dataclasses.fields(i):
            if f.name != "kind":
                v = getattr(i, f.name)
                d["from" if f.name == "from_" else f.name] = dataclasses.asdict(v) if isinstance(v, bc.Vec3) else v
        intents.append(d)
    return {"agent": reply.agent, "posture": reply.posture, "intents": intents}


def main():
    cmd, args = sys.argv[2], sys.argv[3:]
    if cmd == "build":
        ticks = [tick_of(t) for t in json.load(open(args[0], encoding="utf-8"))["ticks"]]
        sys.stdout.buffer.write(bc.build_batch(ticks))
    elif cmd == "parse":
        f = json.load(open(args[0], encoding="utf-8"))
        print(json.dumps([normal(r) for r in bc.parse_replies(f["body"], f["agents"])]))
    elif cmd == "sign":
        out = []
        for v in json.load(open(args[0], encoding="utf-8"))["vectors"]:
            out.append({"canonical": bc.canonical_string(v["method"], v["target"], v["timestamp"], v["body"]),
                        "signature": bc.signature(v["key"], v["method"], v["target"], v["timestamp"], v["body"]),
                        "headers": bc.signed_headers(v["key"], v["method"], v["target"], v["body"], now=v["timestamp"] + 0.9)})
        print(json.dumps(out))
    elif cmd == "live":
        url, token, form, fixture = args
        client = bc.BrainClient(url, token, token_form=form, timeout_s=60)
        ticks = [tick_of(t) for t in json.load(open(fixture, encoding="utf-8"))["ticks"]]
        print(json.dumps({"health": client.health(), "replies": [normal(r) for r in client.ticks(ticks)],
                          "single": normal(client.tick(ticks[0]))}))
    elif cmd in ("refused", "silent"):
        url, token, form, fixture = args if cmd == "refused" else (args[0], None, "bearer", args[1])
        ticks = [tick_of(t) for t in json.load(open(fixture, encoding="utf-8"))["ticks"]]
        try:
            # A silent peer needs a short wait; a real one a generous one on a busy machine.
            bc.BrainClient(url, token, token_form=form, timeout_s=0.5 if cmd == "silent" else 60).ticks(ticks)
            print(json.dumps({"raised": False}))
        except bc.BrainstemError as err:
            print(json.dumps({"raised": True, "status": err.status, "code": err.code}))
    elif cmd == "chunks":
        # Chunks of N small ticks and of N ticks of about 16 KiB each.
        n = int(args[1])
        base = json.load(open(args[0], encoding="utf-8"))["ticks"][1]
        small = [tick_of({**base, "snapshot": {**base["snapshot"], "agent": i}}) for i in range(n)]
        heard = [{"from": 1, "text": "x" * 500, "at_s": 0}] * 32
        big = [tick_of({**base, "snapshot": {**base["snapshot"], "agent": i, "heard": heard}}) for i in range(n)]
        big_chunks = bc._chunks(big)
        print(json.dumps({"small": [len(a) for a, _ in bc._chunks(small)],
                          "big": [len(a) for a, _ in big_chunks],
                          "bigBytes": [len(b) for _, b in big_chunks],
                          "bigAgents": [x for a, _ in big_chunks for x in a],
                          "bodiesAreJson": all(isinstance(json.loads(b), list) for _, b in big_chunks)}))
    elif cmd == "many":
        url, token, fixture, n = args
        base = json.load(open(fixture, encoding="utf-8"))["ticks"][1]
        ticks = [tick_of({**base, "snapshot": {**base["snapshot"], "agent": i}}) for i in range(int(n))]
        results = bc.BrainClient(url, token, timeout_s=60).ticks(ticks)
        print(json.dumps({"agents": [r.agent for r in results], "replies": sum(isinstance(r, bc.Reply) for r in results)}))
    elif cmd == "controlplane":
        url, server_id, key = args
        cp = bc.ControlPlaneClient(url, server_id, key, timeout_s=60)
        bundle, etag = cp.get_config()
        again, etag2 = cp.get_config(etag)
        print(json.dumps({"version": bundle["version"], "etag": etag, "notModified": again is None, "etag2": etag2}))
    else:
        raise SystemExit(f"unknown command {cmd}")


main()
