// Keeps the registry in step with the world: an entity is registered when it is initialised
// and removed when it dies or is deleted. Players register when their identity is known
// (OnConnect in MissionServer); brainstem's own characters register with their spawn id.

modded class ZombieBase
{
	protected int m_BrainstemId;

	override void EEInit()
	{
		super.EEInit();
		if (GetGame().IsServer())
		{
			m_BrainstemId = BrainstemIds.Transient();
			BrainstemRegistry.Get().Add(m_BrainstemId, "zombie", this);
		}
	}

	override void EEKilled(Object killer)
	{
		BrainstemRegistry.Get().Remove(m_BrainstemId);
		super.EEKilled(killer);
	}

	override void EEDelete(EntityAI parent)
	{
		BrainstemRegistry.Get().Remove(m_BrainstemId);
		super.EEDelete(parent);
	}
}

modded class AnimalBase
{
	protected int m_BrainstemId;

	override void EEInit()
	{
		super.EEInit();
		if (GetGame().IsServer())
		{
			m_BrainstemId = BrainstemIds.Transient();
			BrainstemRegistry.Get().Add(m_BrainstemId, "animal", this);
		}
	}

	override void EEKilled(Object killer)
	{
		BrainstemRegistry.Get().Remove(m_BrainstemId);
		super.EEKilled(killer);
	}

	override void EEDelete(EntityAI parent)
	{
		BrainstemRegistry.Get().Remove(m_BrainstemId);
		super.EEDelete(parent);
	}
}

modded class PlayerBase
{
	// The registry id of this player or brainstem character (0 until registered).
	int m_BrainstemId;

	void BrainstemRegister(int id, string kind)
	{
		m_BrainstemId = id;
		BrainstemRegistry.Get().Add(id, kind, this);
	}

	override void EEKilled(Object killer)
	{
		if (m_BrainstemId != 0)
			BrainstemRegistry.Get().Remove(m_BrainstemId);
		super.EEKilled(killer);
	}

	override void EEDelete(EntityAI parent)
	{
		if (m_BrainstemId != 0)
			BrainstemRegistry.Get().Remove(m_BrainstemId);
		super.EEDelete(parent);
	}
}
