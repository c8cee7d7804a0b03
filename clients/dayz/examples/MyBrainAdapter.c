// An example adapter and its wiring, to copy into your server mod's 5_Mission scripts and
// fill in. `MyAI` stands for your AI mod's character class and its movement/combat calls.

class MyBrainAdapter : BrainstemAdapter
{
	ref array<PlayerBase> m_Characters = new array<PlayerBase>;

	override void Gather(array<ref BrainTick> ticks)
	{
		foreach (PlayerBase ai : m_Characters)
		{
			if (!ai || !ai.IsAlive())
				continue;
			BrainTick t = new BrainTick();
			BrainstemPerception.FillSelf(t, ai);
			BrainstemPerception.FillTargets(t, ai, 300, true);
			t.hunger = 20;
			t.thirst = 20;
			t.role = "survivor";
			ticks.Insert(t);
		}
	}

	override void Apply(BrainReply reply)
	{
		PlayerBase ai = FindCharacter(reply.agent);
		if (!ai)
			return;
		// reply.posture: "standing" | "crouched" | "prone"; kinds not handled below
		// (Idle, Logoff, any newer one) are ignored.
		foreach (BrainIntent intent : reply.intents)
		{
			switch (intent.kind)
			{
				case "MoveTo":
					// MyAI.MoveTo(ai, intent.to.ToVector(), intent.speed);
					break;
				case "Engage":
					// MyAI.Aim(ai, intent.target); if (intent.fire) MyAI.Fire(ai);
					break;
				case "Flee":
					// MyAI.MarkThreat(ai, intent.from);
					break;
				case "Face":
					// MyAI.Turn(ai, intent.yaw_deg);
					break;
				case "Investigate":
					// MyAI.LookAt(ai, intent.at.ToVector());
					break;
				case "Say":
					// MyAI.Chat(ai, intent.text, intent.channel);
					break;
				case "Emote":
					// MyAI.Emote(ai, intent.name);
					break;
			}
		}
	}

	PlayerBase FindCharacter(int agent)
	{
		foreach (PlayerBase ai : m_Characters)
		{
			if (ai && ai.GetID() == agent)
				return ai;
		}
		return null;
	}
}

modded class MissionServer
{
	ref BrainstemClient m_Brainstem;
	ref MyBrainAdapter m_BrainAdapter;

	override void OnInit()
	{
		super.OnInit();
		m_BrainAdapter = new MyBrainAdapter();
		// Token: the sidecar's --token (or SERVICE_BRAIN_TOKEN); cadence 0.5 s = 2 Hz.
		m_Brainstem = new BrainstemClient("http://127.0.0.1:8088/", "change-me", m_BrainAdapter, 0.5);
		m_Brainstem.Start();
	}
}
