// Perception helpers for AI characters built on PlayerBase (as most DayZ AI mods' are). An
// adapter may use them or gather its own; they only read game state.
class BrainstemPerception
{
	// Eye and chest heights, metres above the feet, for line-of-sight rays.
	static const float EYE_HEIGHT = 1.6;
	static const float CHEST_HEIGHT = 1.0;

	// Position, heading, health, blood and the weapon in hands. Hunger and thirst are left to
	// the adapter (0..100, whatever the AI mod tracks).
	static void FillSelf(BrainTick t, PlayerBase ai)
	{
		t.agent = ai.GetID();
		t.time_s = GetGame().GetTickTime();
		t.pos = ai.GetPosition();
		vector dir = ai.GetDirection();
		float heading = Math.Atan2(dir[0], dir[2]) * Math.RAD2DEG;
		if (heading < 0)
			heading += 360;
		t.heading_deg = heading;
		t.health = ai.GetHealth("", "Health");
		t.blood = ai.GetHealth("", "Blood");
		Weapon_Base weapon = Weapon_Base.Cast(ai.GetHumanInventory().GetEntityInHands());
		t.has_weapon = weapon != null;
		t.ammo = 0;
		if (weapon)
			t.ammo = weapon.GetTotalCartridgeCount(weapon.GetCurrentMuzzle());
	}

	// Living players, AI characters, infected and animals within `radius` metres, each with
	// line of sight. Infected are hostile; players and AI characters are when `humansHostile`.
	static void FillTargets(BrainTick t, PlayerBase ai, float radius, bool humansHostile)
	{
		array<Object> objects = new array<Object>;
		array<CargoBase> proxies = new array<CargoBase>;
		GetGame().GetObjectsAtPosition3D(ai.GetPosition(), radius, objects, proxies);
		foreach (Object o : objects)
		{
			EntityAI e = EntityAI.Cast(o);
			if (!e || e == ai || !e.IsAlive())
				continue;
			BrainTarget target = new BrainTarget();
			PlayerBase human = PlayerBase.Cast(e);
			if (human)
			{
				target.kind = "ai";
				if (human.GetIdentity())
				{
					target.kind = "player";
					target.name = human.GetIdentity().GetName();
				}
				target.hostile = humansHostile;
				target.health = human.GetHealth("", "Health");
			}
			else if (e.IsInherited(DayZInfected))
			{
				target.kind = "zombie";
				target.hostile = true;
			}
			else if (e.IsInherited(AnimalBase))
			{
				target.kind = "animal";
				target.hostile = false;
			}
			else
			{
				continue;
			}
			target.id = e.GetID();
			target.pos = e.GetPosition();
			target.visible = CanSee(ai, e);
			t.targets.Insert(target);
		}
	}

	// True when nothing blocks a ray from `from`'s eyes to `to`'s chest.
	static bool CanSee(EntityAI from, EntityAI to)
	{
		vector eye = from.GetPosition();
		eye[1] = eye[1] + EYE_HEIGHT;
		vector chest = to.GetPosition();
		chest[1] = chest[1] + CHEST_HEIGHT;
		vector contactPos;
		vector contactDir;
		int component;
		set<Object> hits = new set<Object>;
		if (!DayZPhysics.RaycastRV(eye, chest, contactPos, contactDir, component, hits, null, from, true, false, ObjIntersectView, 0.1))
			return true;
		return hits.Count() > 0 && hits.Get(0) == to;
	}
}
