// Package shooter is the small server-authoritative game of
// "rewind demo predict": each client steers a ship with a Stick input and
// fires bullets; the server simulates the authoritative World and
// replicates it, each client predicts it with package predict.
//
// The simulation is deterministic integer arithmetic on one predicted
// component, Body (position and velocity). Ship and Bullet are replicated
// but never change after the spawn, so clients do not predict them. A
// ship's velocity comes from its player's input of the tick; a bullet flies
// straight for BulletTTL ticks. The server spawns and despawns bullets
// (World.Step); clients move the bodies they predict (Move) and never spawn:
// their bullets arrive by replication. Whether and where a player fires is
// decided by Shoot alone, so a client can later predict its own bullets
// from the same function.
package shooter
