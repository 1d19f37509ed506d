package projection

// SetAfterBodyStep sets the function called at each step of writing bodies (see
// afterBodyStep), for the tests of package projection_test.
func (c *Catalog) SetAfterBodyStep(f func(step string)) { c.afterBodyStep = f }
