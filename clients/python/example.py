"""A headless bot loop: three guards (agent ids 3101-3103) on one patrol route, one /ticks call
per cadence; from round 3 a hostile player (3199) stands 12 m from guard 3103.

    python3 example.py --url http://127.0.0.1:8088 --token T [--hz 2] [--rounds 4] [--timeout S]

Prints each character's posture and intents every round.
"""
import argparse
import time

from brainstem_client import (BrainClient, BrainstemError, Engage, Flee, MoveTo, Profile, Reply, SelfState,
                              Snapshot, Target, Tick, Vec3)

parser = argparse.ArgumentParser()
parser.add_argument("--url", default="http://127.0.0.1:8088")
parser.add_argument("--token", default=None)
parser.add_argument("--hz", type=float, default=2.0)
parser.add_argument("--rounds", type=int, default=4)
parser.add_argument("--timeout", type=float, default=None, help="seconds per call (default: one cadence period)")
args = parser.parse_args()

period = 1.0 / args.hz
# A call no longer than the cadence period never delays the next round.
brain = BrainClient(args.url, args.token, token_form="header", timeout_s=args.timeout or period)
route = [Vec3(1200, 8, 4400), Vec3(1300, 8, 4400)]
characters = {3101: Vec3(1200, 8, 4400), 3102: Vec3(1210, 8, 4405), 3103: Vec3(1190, 8, 4395)}
game_time = 100.0



def apply(reply: Reply) -> None:
    """Where a bot turns intents into actions; here it prints them."""
    actions = []
    for intent in reply.intents:
        if isinstance(intent, MoveTo):
            actions.append(f"{intent.speed} to ({intent.to.x:.0f}, {intent.to.z:.0f})")
        elif isinstance(intent, Engage):
            actions.append(f"engage {intent.target}" + (" firing" if intent.fire else ""))
        elif isinstance(intent, Flee):
            actions.append(f"flee {intent.from_}")
        else:
            actions.append(intent.kind)
    print(f"round {round_no} agent {reply.agent}: {reply.posture}: {'; '.join(actions)}")


for round_no in range(1, args.rounds + 1):
    started = time.monotonic()
    ticks = []
    for agent, pos in characters.items():
        # Guard 3103 sees a hostile player 12 m away from round 3 on.
        targets = [Target(3199, "player", Vec3(pos.x + 12, 8, pos.z), hostile=True, visible=True)] if agent == 3103 and round_no >= 3 else []
        ticks.append(Tick(
            Snapshot(agent, game_time, SelfState(pos, 90, 100, 5000, 20, 20, has_weapon=True, ammo=30),
                     targets=targets, route=route, squad="python-guards"),
            Profile(name=f"guard-{agent}", role="guard")))
    try:
        for result in brain.ticks(ticks):
            if isinstance(result, Reply):
                apply(result)
            else:
                print(f"round {round_no} agent {result.agent}: refused {result.code} {result.message}")
    except BrainstemError as err:
        print(f"round {round_no}: call failed ({err}); characters keep their last intents")
    game_time += period
    time.sleep(max(0.0, period - (time.monotonic() - started)))
