// Package input carries a game's inputs from clients to the server and
// to the other clients, stamped with the tick they are for, for
// client-side prediction (package predict) over package replicate.
//
// Register[T] registers a game input type with a replicate.Protocol
// (three unreliable messages: client to server, server to the other
// clients, and the server's Report to each client). Client and server
// register it the same way, in the same order as their other types.
//
// The client's Sender.Add(client, F, v) keeps v for re-simulation
// (Sender.Input(F), the last Window ticks) and sends it with the inputs
// of the K-1 ticks before it (K = Config.Redundancy, default 3; a
// predict.ClientFrame raises it with the loss the reports measure). With
// K = 3 an input is lost at 20% loss only when 3 messages in a row are,
// 0.8% (TestInputsSurviveLoss measures 99.2% real at 20% loss and 60 ms
// RTT, 84% with K = 1). Inputs are at most Config.MaxInputSize bytes,
// one message per tick.
//
// The server's Buffer (ReceiveAt(s, F) after replicate.Server.Receive, F
// the tick about to be simulated) gives Input(client, F) for the tick it
// simulates, repeating the last input when F's is missing. It counts
// missing (each tick once), late (arrived after its tick was simulated
// without it), duplicate and garbage inputs (ticks more than Window from
// the simulated tick) per client (Stats); Peek reads an input and when it
// arrived without counting. It notes each message's arrival for the
// client's next Report (SendReports, once per tick), which the client's
// tick sync (package predict/ticksync) steers by. Forward sends each
// client's newest inputs to the others; a client's Remote gives another
// player's input for a tick, or the last known one.
//
// Receiving inputs allocates nothing in steady state, replicate's
// receive path included (BenchmarkServerInputs: 64 clients, 0
// allocations per tick): the batch decoder decodes into the batch's own
// slice, and the default input codec is the canonical form (the same
// bytes as encoding/binary for a fixed-size T) without reflection per
// value. So the Batch values replicate returns are valid only until the
// next receive: Buffer.Store copies the inputs out.
//
// # Wire format
//
// A Batch is a uvarint player, a uvarint last tick, a count byte
// (1..MaxRedundancy), a 16-bit repeat mask (input i the same as input
// i-1: not sent), then each other input's encoding, after a length byte
// unless the input codec has a fixed size. A Report is a uvarint Tick, a varint Newest-Tick, a uvarint
// Lost, a uvarint count of arrivals (at most MaxReportArrivals), each a
// uvarint Newest-Last and a varint Margin, then uvarints Missing and
// Late. Every varint is minimal
// (the one varint rule of every rewind wire format): the decoders refuse
// padded or overlong varints with ErrMalformed, so a message has one
// encoding, and the fuzz targets check that accepted bytes re-encode to
// exactly themselves.
package input
