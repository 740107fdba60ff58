package iceberg

import "github.com/connectd/connectd/internal/testutil/icebergtest"

// modelSeed is a model test's seed: def, or the value of the environment variable env to replay a
// failure; it is logged either way.
var modelSeed = icebergtest.ModelSeed
