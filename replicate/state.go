package replicate

import (
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// srvEnt is the server's replication state of one entity slot.
type srvEnt struct {
	e      ecs.Entity
	mask   uint64 // replicated components
	once   uint64 // of which replicated only once
	listed bool
	pos    int32
	touch  tick.Tick // dedupe of structural processing
	// structAt is the tick of the entity's last spawn or structural change.
	structAt tick.Tick
	chg      tick.Tick // tick at which a value changed (dedupe)
	ins      uint64    // components inserted this tick
	rem      uint64    // components removed this tick
	prio     float32
	// The entity's mutation block of this tick, shared by all clients.
	blkStamp       tick.Tick
	blkMask        uint64
	blkOff, blkLen uint32
	// This tick's shared block (the components that changed this tick), its
	// segment, and the latest change tick of its other live components.
	shOff, shLen uint32
	seg          int32
	others       tick.Tick
	hasOthers    bool
	// hist holds the last two ticks at which the entity's shared block went
	// out in a segment, newest first: clients that took the segment whole
	// learn those sends from here (catchUp), not from their own state.
	hist [2]histEntry
}

// histEntry: at tick, the entity's shared block was in segment seg-1 (seg 0:
// no entry).
type histEntry struct {
	tick tick.Tick
	seg  int32
}

// clientEnt is a client's view of one entity slot (32 bytes).
type clientEnt struct {
	gen       uint32
	ackedTick tick.Tick
	sentTick  tick.Tick
	sentSeq   uint32
	// prevTick and prevSeq are the send before the last: its late ack still
	// counts (a resend after a timeout must not make the first send's ack
	// worthless, or a queue that delays acks keeps everything resending).
	prevTick tick.Tick
	prevSeq  uint32
	acc      float32
	vis      uint8 // 0 default, 1 visible, 2 hidden
	flags    uint8
}

const (
	ceSpawned  = 1
	ceResend   = 2
	ceDeferred = 4
	ceSeen     = 8  // sentSeq valid
	cePrev     = 16 // prevSeq valid
)

type serverClient struct {
	// The fields read for every changed entity come first, together.
	active   bool  // taking part in this tick's send
	seg      int32 // 1 + index of the segment whose message is open, or 0
	seq      uint32
	nPkts    int
	cur      *sentRecord
	entRing  []uint32 // power-of-two ring of entity slots of the records
	entStart int      // absolute index of entRing's oldest entry
	entEnd   int
	ackBits  *[ackWindow / 64]uint64
	slow     []uint32 // changed entities to visit after the segments
	whole    *[wholeRing]wholeTick
	// shown has a bit per entity slot spawned on the client before this
	// tick (newSpawns: spawned this tick, shown at the end of it).
	shown     []uint64
	newSpawns []uint32
	// dirty: since an irregularity (a lost message, a deferral for lack
	// of messages) the client may owe values older than its
	// acknowledged ticks; it clears once everything sent up to settle is
	// acknowledged.
	dirty     bool
	settle    tick.Tick
	wholeMsgs uint64 // messages sent as whole segments (tests)

	slot   int // column of the client in Server.cstate
	nEnts  int // entity slots covered (for RetainedBytes)
	maxPkt int
	id     ClientID
	conn   transport.MessageConn
	authed bool
	fresh  bool // authorized this tick: gets everything visible
	gone   bool

	// Until authed (its hello was accepted; it then holds a slot), the
	// client is pending and is rejected if no hello came by helloBy.
	helloBy time.Time
	// queued and queuedBytes: the client's game messages waiting in the
	// server's inboxes (its quota).
	queued, queuedBytes int

	spawned    int
	lastUpdate tick.Tick
	recs       []sentRecord // ring, oldest first from recHead
	recHead    int
	recLen     int
	ackRTT     time.Duration // smoothed time from sending a mutation message to its ack
	backoff    uint          // timeout doublings after repeated losses
	resend     []uint32
	deferred   []uint32
	resend2    []uint32 // the other buffer of each list, swapped every tick
	deferred2  []uint32
	visQueue   []visChange
	maps       []mapping

	secMap, secDesp, secRem, secIns []byte
	nMap, nDesp, nRem, nIns         int
	upd                             []byte
	pkts                            [][]byte
	// backlog holds update messages (parts of a large update, and the
	// updates after it) not sent yet, each length-prefixed; backOff is the
	// offset of the first unsent one.
	backlog []byte
	backOff int

	stats           ClientStats
	violations      int
	violationStart  time.Time
	rateStart       time.Time
	rateOut, rateIn uint64
}

type mapping struct {
	server, client ecs.Entity
}
