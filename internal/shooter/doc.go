// Package shooter is the small server-authoritative game of
// "rewind demo predict" and of the Ebitengine arena (examples/arena,
// which imports it across the module boundary: Go's internal rule goes
// by import path): each client steers a ship with a Stick input and
// fires bullets; the server simulates the authoritative World and
// replicates it, each client predicts it with package predict.
//
// The simulation is deterministic integer arithmetic. Body (position and
// velocity) is predicted; so is Bullet on the client, since the client
// spawns its bullets itself; Ship is replicated only and never changes
// after the spawn. A ship's velocity comes from its player's input of the
// tick; a bullet flies straight for BulletTTL ticks. Whether and where a
// player fires is decided by Shoot alone, which both sides call: the
// server (Server.Step) spawns every bullet under BulletKey(player, tick)
// with predict.ServerSpawn, and a client (Client.Step) spawns the bullets
// of every ship it predicts as predicted spawns under the same key
// (Timeline.Spawn), so replication adopts each as the server's bullet: it
// appears when fired and is never duplicated. Bullets expire on both sides
// at the same tick; the client's despawn is a despawn marker
// (Timeline.Despawn), which a rollback before it undoes.
//
// The other players' ships, when the client predicts them, fire with the
// input they are predicted with (the forwarded input when it arrived, the
// last known one otherwise), so their bullets leave them as their ship is
// shown; a wrong guess is undone when a rollback re-simulates its tick
// with the real input, or dropped when its tick leaves the window, a
// misprediction either way (predict's PredictedSpawnsDropped). Ships shown by interpolation have no Body on
// the client and fire nothing there: their bullets arrive by replication
// (predict's ServerSpawnsUnpredicted) and are predicted from then on.
//
// For bandwidth, Body travels quantized (BodyCodec, exact: 5 bytes) and a
// bullet's Body only with its spawn (a Rule with Mode Once). Ships also
// hit-scan (Scan, HitScan): the client judges a scan on what its screen
// showed, the input carrying the claim (lagcomp.Recent), and the server
// judges it with lag compensation (Server keeps a lagcomp.History).
package shooter
