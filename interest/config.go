package interest

import "math"

// Defaults of GridConfig: a zero field takes its default. Distances are in
// the game's units.
const (
	// DefaultRadius is a client's view radius until Grid.SetRadius.
	DefaultRadius = 100.0
	// DefaultMarginFraction: the default Margin is this fraction of Radius.
	DefaultMarginFraction = 0.1
)

// GridConfig configures a Grid. Zero fields take the documented defaults;
// negative, infinite or NaN ones make NewGrid fail with ErrConfig.
type GridConfig struct {
	// Radius is each client's view radius R until Grid.SetRadius gives it
	// another. Default DefaultRadius.
	Radius float64
	// Margin is the hysteresis band: an entity becomes visible within R of
	// the client's focus and hidden only beyond R + Margin, so an entity
	// moving back and forth across R by less than Margin does not flip.
	// It applies to every client's radius. Default Radius ×
	// DefaultMarginFraction.
	Margin float64
	// CellSize is the side of the grid's square cells, the index that
	// finds entities near a focus. Visibility depends only on distances,
	// never on cells, so the size only trades cost: each Apply scans the
	// cells overlapping a client's square of side 2(R + Margin). Default
	// Radius (3 × 3 to 4 × 4 cells per client with the default margin).
	CellSize float64
}

// withDefaults checks cfg and fills its zero fields.
func (cfg GridConfig) withDefaults() (GridConfig, error) {
	for _, v := range []float64{cfg.Radius, cfg.Margin, cfg.CellSize} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return cfg, ErrConfig
		}
	}
	if cfg.Radius == 0 {
		cfg.Radius = DefaultRadius
	}
	if cfg.Margin == 0 {
		cfg.Margin = cfg.Radius * DefaultMarginFraction
	}
	if cfg.CellSize == 0 {
		cfg.CellSize = cfg.Radius
	}
	return cfg, nil
}
