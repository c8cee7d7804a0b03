// brainstem's own minimal AI character: a server-side survivor (a PlayerBase with no player
// behind it) whose body is driven every frame the way a player's input would drive it, from
// the intents of the last reply. The brain decides at 2 Hz; this steers, aims and fires at
// frame rate. No AI framework is needed.

// One character's spawn definition (from characters.json): the id is the stable agent id.
class BrainstemSpawn
{
	int id;
	string name;
	string role = "survivor";
	string model = "SurvivorM_Mirek";
	string weapon = "MakarovIJ70";
	vector pos;
	ref array<vector> route;
}

class BrainstemCharacter
{
	// Metres from a MoveTo point at which the character stops.
	static const float ARRIVED_M = 1.0;
	// Seconds between shots while an Engage intent says fire.
	static const float SHOT_INTERVAL_S = 0.6;
	// Metres within which players read a character's Say line.
	static const float SAY_RANGE_M = 30.0;

	ref BrainstemSpawn spawn;
	PlayerBase body;
	protected ref BrainReply m_Reply;
	protected string m_Stance;
	protected float m_NextShot;

	void BrainstemCharacter(BrainstemSpawn s)
	{
		spawn = s;
	}

	bool IsAlive()
	{
		return body && body.IsAlive();
	}

	// Creates the body at the spawn point, armed and loaded, and registers it under its id.
	void Spawn()
	{
		body = PlayerBase.Cast(GetGame().CreatePlayer(null, spawn.model, spawn.pos, 0, "NONE"));
		if (!body)
			return;
		Weapon_Base gun = Weapon_Base.Cast(body.GetHumanInventory().CreateInHands(spawn.weapon));
		if (gun)
			gun.SpawnAmmo();
		body.BrainstemRegister(spawn.id, "ai");
	}

	// This cadence's tick: self state from the body, targets from the registry.
	BrainTick Tick(float now)
	{
		BrainTick t = new BrainTick();
		t.agent = spawn.id;
		t.time_s = now;
		t.pos = body.GetPosition();
		vector dir = body.GetDirection();
		float heading = Math.Atan2(dir[0], dir[2]) * Math.RAD2DEG;
		if (heading < 0)
			heading += 360;
		t.heading_deg = heading;
		t.health = body.GetHealth("", "Health");
		t.blood = body.GetHealth("", "Blood");
		t.hunger = 20;
		t.thirst = 20;
		Weapon_Base gun = Weapon_Base.Cast(body.GetHumanInventory().GetEntityInHands());
		t.has_weapon = gun != null;
		if (gun)
			t.ammo = gun.GetTotalCartridgeCount(gun.GetCurrentMuzzle());
		BrainstemRegistry.Get().Targets(spawn.id, body, now, t.targets);
		t.route = spawn.route;
		t.name = spawn.name;
		t.role = spawn.role;
		return t;
	}

	// The new reply: kept until the next one; Say lines are spoken once, now.
	void SetReply(BrainReply reply)
	{
		m_Reply = reply;
		foreach (BrainIntent intent : reply.intents)
		{
			if (intent.kind == "Say")
				Say(intent.text);
		}
		SetStance(reply.posture);
	}

	// Every server frame: steer, aim and fire from the current intents.
	void Drive(float now)
	{
		if (!IsAlive() || !m_Reply)
			return;
		HumanInputController input = body.GetInputController();
		bool moving = false;
		bool engaging = false;
		foreach (BrainIntent intent : m_Reply.intents)
		{
			if (intent.kind == "Engage" && !engaging)
			{
				EntityAI target = BrainstemRegistry.Get().EntityOf(intent.target);
				if (!target)
					continue;
				engaging = true;
				Face(target.GetPosition());
				input.OverrideRaise(HumanInputControllerOverrideType.ENABLED, true);
				if (intent.fire && now >= m_NextShot)
				{
					Weapon_Base gun = Weapon_Base.Cast(body.GetHumanInventory().GetEntityInHands());
					if (gun)
						body.GetWeaponManager().Fire(gun);
					m_NextShot = now + SHOT_INTERVAL_S;
				}
			}
			else if (intent.kind == "MoveTo" && !moving && intent.to)
			{
				vector to = intent.to.ToVector();
				if (vector.Distance(body.GetPosition(), to) <= ARRIVED_M)
					continue;
				moving = true;
				// While engaging the character faces its target and moves where it is told
				// only when not aiming; otherwise it turns toward the point and walks forward.
				if (!engaging)
					Face(to);
				input.OverrideMovementSpeed(HumanInputControllerOverrideType.ENABLED, Gait(intent.speed));
				input.OverrideMovementAngle(HumanInputControllerOverrideType.ENABLED, 0);
			}
			else if (intent.kind == "Face" && !engaging && !moving)
			{
				float yaw = intent.yaw_deg * Math.DEG2RAD;
				body.SetDirection(Vector(Math.Sin(yaw), 0, Math.Cos(yaw)));
			}
		}
		if (!moving)
			input.OverrideMovementSpeed(HumanInputControllerOverrideType.ENABLED, DayZPlayerConstants.MOVEMENTIDX_IDLE);
		if (!engaging)
			input.OverrideRaise(HumanInputControllerOverrideType.ENABLED, false);
	}

	protected void Face(vector at)
	{
		vector d = at - body.GetPosition();
		d[1] = 0;
		if (d.Length() > 0.01)
			body.SetDirection(d.Normalized());
	}

	static int Gait(string speed)
	{
		if (speed == "sprint")
			return DayZPlayerConstants.MOVEMENTIDX_SPRINT;
		if (speed == "jog")
			return DayZPlayerConstants.MOVEMENTIDX_RUN;
		return DayZPlayerConstants.MOVEMENTIDX_WALK;
	}

	protected void SetStance(string posture)
	{
		if (posture == m_Stance)
			return;
		HumanCommandMove move = body.GetCommand_Move();
		if (!move)
			return;
		m_Stance = posture;
		if (posture == "crouched")
			move.ForceStance(DayZPlayerConstants.STANCEIDX_CROUCH);
		else if (posture == "prone")
			move.ForceStance(DayZPlayerConstants.STANCEIDX_PRONE);
		else
			move.ForceStance(DayZPlayerConstants.STANCEIDX_ERECT);
	}

	// The line goes to every player within SAY_RANGE_M as a chat message.
	protected void Say(string text)
	{
		array<Man> players = new array<Man>;
		GetGame().GetPlayers(players);
		foreach (Man man : players)
		{
			PlayerBase p = PlayerBase.Cast(man);
			if (p && p.GetIdentity() && vector.Distance(p.GetPosition(), body.GetPosition()) <= SAY_RANGE_M)
				GetGame().RPCSingleParam(p, ERPCs.RPC_USER_ACTION_MESSAGE, new Param1<string>(spawn.name + ": " + text), true, p.GetIdentity());
		}
	}
}
