// One AI character: its stable agent id, its perception registration, and what it does with
// a reply. Movement goes through a NavMeshAgent when the object has one, else it walks the
// transform; aiming turns it; firing and speech are events your game code handles.
using System;
using UnityEngine;
using UnityEngine.AI;

namespace Brainstem
{
    public class BrainstemCharacter : MonoBehaviour
    {
        [Tooltip("The character's agent id: keep it stable (the sidecar remembers the character by it), unique per character.")]
        public long agentId = 4101;
        public string characterName = "Rosa";
        [Tooltip("survivor | bandit | guard | trader")]
        public string role = "guard";
        [Tooltip("player | ai | zombie | animal: what this object is to the others.")]
        public string kind = "ai";
        [Tooltip("Patrol waypoints (optional).")]
        public Transform[] route = new Transform[0];
        public bool hasWeapon = true;
        public int ammo = 30;
        [Range(0, 100)] public float health = 100;

        /// <summary>(this, target, fire) when an Engage intent arrives: aim, and shoot if fire.</summary>
        public event Action<BrainstemCharacter, Transform, bool> Engage;
        /// <summary>(this, text) when a Say intent arrives.</summary>
        public event Action<BrainstemCharacter, string> Say;

        /// <summary>The last reply's posture and first intent, for debugging and UI.</summary>
        public string Posture { get; private set; }
        public string Doing { get; private set; }

        Vector3? moveTo;
        float speed;
        Transform aimAt;
        NavMeshAgent nav;

        void Awake() { nav = GetComponent<NavMeshAgent>(); }
        void OnEnable() { BrainstemDirector.Register(this); }
        void OnDisable() { BrainstemDirector.Unregister(this); }

        internal void Apply(Reply reply, Func<long, Transform> find)
        {
            Posture = reply.Posture;
            moveTo = null;
            aimAt = null;
            Doing = reply.Intents.Count > 0 ? reply.Intents[0].Kind : "Idle";
            foreach (var intent in reply.Intents)
            {
                var move = intent as MoveTo;
                var engage = intent as Engage;
                var say = intent as Say;
                if (move != null && moveTo == null)
                {
                    moveTo = new Vector3((float)move.To.X, (float)move.To.Y, (float)move.To.Z);
                    speed = move.Speed == "sprint" ? 5.5f : move.Speed == "jog" ? 3.5f : 1.5f;
                }
                else if (engage != null && aimAt == null)
                {
                    aimAt = find(engage.Target);
                    if (aimAt != null && Engage != null) Engage(this, aimAt, engage.Fire);
                }
                else if (say != null && Say != null) Say(this, say.Text);
            }
            if (nav != null && moveTo.HasValue)
            {
                nav.speed = speed;
                nav.SetDestination(moveTo.Value);
            }
        }

        void Update()
        {
            if (aimAt != null)
            {
                var d = aimAt.position - transform.position;
                d.y = 0;
                if (d.sqrMagnitude > 0.0001f) transform.rotation = Quaternion.LookRotation(d);
            }
            if (nav != null || !moveTo.HasValue) return;
            var to = moveTo.Value - transform.position;
            to.y = 0;
            if (to.magnitude < 0.5f) { moveTo = null; return; }
            if (aimAt == null) transform.rotation = Quaternion.LookRotation(to);
            transform.position += to.normalized * Mathf.Min(speed * Time.deltaTime, to.magnitude);
        }
    }
}
