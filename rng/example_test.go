package rng_test

import (
	"fmt"

	"github.com/rewindgo/rewind/rng"
)

func ExampleRand() {
	type World struct {
		Frame int
		Rand  rng.Rand // plain data: saved and restored with the world
	}
	w := World{Rand: rng.NewSeed(42)}

	saved := w // snapshot
	fmt.Println(w.Rand.IntN(6)+1, w.Rand.IntN(6)+1)
	w = saved // rollback: the same rolls again
	fmt.Println(w.Rand.IntN(6)+1, w.Rand.IntN(6)+1)
	// Output:
	// 3 1
	// 3 1
}

func ExampleStream() {
	// One stream per entity: what entity 7 draws does not depend on how many
	// numbers entity 8 drew before it.
	const seed = 42
	e7, e8 := rng.Stream(seed, 7), rng.Stream(seed, 8)
	e8.Uint64()
	fmt.Println(e7.IntN(100), e8.IntN(100))
	// Output: 97 16
}

func ExampleRand_MarshalBinary() {
	r := rng.New(1, 2)
	b, _ := r.MarshalBinary()
	fmt.Printf("%q\n", b)

	var restored rng.Rand
	if err := restored.UnmarshalBinary(b); err != nil {
		panic(err)
	}
	fmt.Println(restored == r)
	// Output:
	// "rng1\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x02"
	// true
}
