//go:build !no_iceberg_glue

package catalogx

import _ "github.com/apache/iceberg-go/catalog/glue" // registers the "glue" catalog
