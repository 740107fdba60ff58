import java.util.HashMap;
import java.util.Map;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.types.Types;

/**
 * Creates the benchmark table (the schema the Apache sink infers from the producer's schemaless JSON) in a
 * JDBC catalog (SQLite or PostgreSQL), so that the sink's tasks do not race on creating it.
 * Usage: CreateTable JDBC_URI WAREHOUSE NAMESPACE.TABLE
 */
public class CreateTable {
  public static void main(String[] args) {
    Map<String, String> props = new HashMap<>();
    props.put("uri", args[0]);
    props.put("warehouse", args[1]);
    props.put("jdbc.schema-version", "V1");
    JdbcCatalog cat = new JdbcCatalog();
    cat.setConf(new org.apache.hadoop.conf.Configuration());
    cat.initialize("iceberg", props);
    TableIdentifier id = TableIdentifier.parse(args[2]);
    if (!cat.namespaceExists(id.namespace())) {
      cat.createNamespace(id.namespace());
    }
    Schema schema =
        new Schema(
            Types.NestedField.optional(1, "amount", Types.DoubleType.get()),
            Types.NestedField.optional(2, "email", Types.StringType.get()),
            Types.NestedField.optional(3, "id", Types.LongType.get()),
            Types.NestedField.optional(4, "name", Types.StringType.get()),
            Types.NestedField.optional(5, "note", Types.StringType.get()),
            Types.NestedField.optional(6, "qty", Types.LongType.get()),
            Types.NestedField.optional(7, "region", Types.StringType.get()),
            Types.NestedField.optional(8, "ts", Types.StringType.get()),
            Types.NestedField.optional(9, "version", Types.LongType.get()));
    cat.createTable(id, schema, PartitionSpec.unpartitioned(), Map.of("format-version", "2"));
  }
}
