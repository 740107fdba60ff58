package iceberg

// FileIO schemes and catalogs beyond those catalog.go links (local files, the SQL and the REST catalogs): S3 in
// every build; Glue and Hive unless left out with the build tags no_iceberg_glue / no_iceberg_hive; Google Cloud
// Storage (gs://) and Azure (abfs://, wasb://) only with the tags iceberg_gcs / iceberg_azure. Each pulls in a
// cloud SDK (the GCS client alone brings gRPC, xDS and OpenTelemetry) that a build for other stores carries as
// dead weight.

import _ "github.com/apache/iceberg-go/io/gocloud/s3" // s3, s3a, s3n FileIO
