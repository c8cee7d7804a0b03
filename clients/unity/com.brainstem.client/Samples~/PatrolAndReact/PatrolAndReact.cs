// Builds a small scene at play time: a floor, three guards (agent ids 4101-4103) patrolling
// between two posts, and a player capsule you walk with WASD / the arrow keys. Walk up to the
// guards: they turn to you and raise their weapons, as the sidecar decides. Every reply is
// logged. Put this on an empty GameObject, set the token, press Play.
using UnityEngine;
using Brainstem;

public class PatrolAndReact : MonoBehaviour
{
    public string url = "http://127.0.0.1:8088";
    [Tooltip("The brain token that `brainstem up` prints.")]
    public string token = "";

    Transform player;

    void Awake()
    {
        var floor = GameObject.CreatePrimitive(PrimitiveType.Plane);
        floor.transform.localScale = new Vector3(10, 1, 10);

        var directorObject = new GameObject("Brainstem Director");
        directorObject.SetActive(false);
        var director = directorObject.AddComponent<BrainstemDirector>();
        director.url = url;
        director.token = token;
        directorObject.SetActive(true);

        var postA = new GameObject("Post A").transform;
        postA.position = new Vector3(-10, 0, 0);
        var postB = new GameObject("Post B").transform;
        postB.position = new Vector3(10, 0, 0);
        string[] names = { "Rosa", "Dmitri", "Kay" };
        for (int i = 0; i < 3; i++)
        {
            var body = GameObject.CreatePrimitive(PrimitiveType.Capsule);
            body.name = names[i];
            body.transform.position = new Vector3(-10 + i * 2, 1, 3 * i);
            var c = body.AddComponent<BrainstemCharacter>();
            c.agentId = 4101 + i;
            c.characterName = names[i];
            c.route = new[] { postA, postB };
            c.Engage += (who, target, fire) => Debug.Log(who.characterName + (fire ? " fires at " : " aims at ") + target.name);
            c.Say += (who, text) => Debug.Log(who.characterName + ": " + text);
        }

        var p = GameObject.CreatePrimitive(PrimitiveType.Capsule);
        p.name = "Player";
        p.transform.position = new Vector3(0, 1, -20);
        var me = p.AddComponent<BrainstemCharacter>();
        me.agentId = 4100;
        me.kind = "player";
        player = p.transform;
    }

    void Update()
    {
        var move = new Vector3(Input.GetAxis("Horizontal"), 0, Input.GetAxis("Vertical"));
        player.position += move * 4f * Time.deltaTime;
    }
}
