// Package ticksync keeps a predicting client's simulation ahead of the
// server, so that its input for tick F reaches the server before the
// server simulates F.
//
// A Sync steers by the server's input reports (input.Report, sent by
// input.Buffer.SendReports): how early each input message arrived and
// which were lost. Matched with the messages' send times (Sent) and the
// client's position (Position), they give the offset between the
// client's clock and the server's ticks whatever the client's own lead,
// so the lead settles without swinging. The inputs aim to arrive
// Safety + JitterMultiple x jitter + r ticks early (r covers the
// measured loss, see Config.LateTarget), plus a slow frame's length; the
// redundancy follows r (Redundancy). The error sets tick.Clock's rate
// (Rate); far off, it snaps, never moving the tick backwards. Until the
// reports steer (Steering), it steers by the arrival of server ticks
// (Observe, Lead). PresentLead estimates the lead over the server's
// present. With Config.InputDelay d the input sampled at F is for F+d
// (InputTick). RTTEstimate smooths round-trip samples for Lead.
//
// A Sync reads no clock: every time is passed in, so it runs the same
// under virtual time. predict.ClientFrame drives one; a game that
// composes its own frame calls Report, Sent, Observe, Steps and Position
// itself (ExampleSync). The design, its reasons and its figures are in
// ARCHITECTURE.md (predict, "Tick sync").
package ticksync
