//go:build !no_iceberg_hive

package catalogx

import _ "github.com/apache/iceberg-go/catalog/hive" // registers the "hive" catalog
