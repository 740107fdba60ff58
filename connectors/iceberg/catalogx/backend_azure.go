//go:build !no_iceberg_azure

package catalogx

import _ "github.com/apache/iceberg-go/io/gocloud/azure" // abfs, abfss, wasb, wasbs FileIO
