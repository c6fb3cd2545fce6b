package fixed_test

import (
	"fmt"

	"github.com/rewindgo/rewind/fixed"
)

func Example() {
	// A projectile moving at 7.5 units per second, simulated at 60 Hz.
	pos := fixed.Vec2{}
	vel := fixed.Vec2{X: fixed.FromFraction(15, 2), Y: 0}.Rotate(fixed.Pi / 6)
	dt := fixed.FromFraction(1, 60)
	for range 60 {
		pos = pos.Add(vel.Scale(dt))
	}
	fmt.Println(pos, pos.Length())
	// Output: (6.4951905096, 3.749999986) 7.4999999767
}

func ExampleFixed_Mul() {
	a := fixed.FromFraction(3, 2)
	b := fixed.FromInt(-4)
	fmt.Println(a.Mul(b), a.Div(b), fixed.Max.Mul(b))
	// Output: -6 -0.375 -2147483648
}

func ExampleFixed_Sqrt() {
	fmt.Println(fixed.FromInt(2).Sqrt(), fixed.FromInt(-2).Sqrt())
	// Output: 1.4142135624 0
}

func ExampleAtan2() {
	angle := fixed.Atan2(fixed.One, fixed.One)
	fmt.Println(angle, angle.Sin(), angle.Cos())
	// Output: 0.7853981634 0.7071067812 0.7071067812
}

func ExampleParse() {
	x, err := fixed.Parse("-12.375")
	fmt.Println(x, x.Int(), x.Frac(), err)
	_, err = fixed.Parse("1e3")
	fmt.Println(err)
	// Output:
	// -12.375 -13 0.625 <nil>
	// fixed: invalid syntax: "1e3"
}
