// Reads an Iceberg table with Apache Iceberg's Java generic reader (IcebergGenerics.read), which applies
// every delete file, and prints {"columns": [...], "rows": [[...], ...]} like the DuckDB reader.
//   java -cp 'lib/*' ReadTable.java METADATA_JSON_LOCATION
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.StaticTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;

public class ReadTable {
  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    Table table = new BaseTable(new StaticTableOperations(args[0], new HadoopFileIO(new Configuration())), "t");
    List<Types.NestedField> cols = table.schema().columns();
    StringBuilder b = new StringBuilder("{\"columns\": [");
    for (int i = 0; i < cols.size(); i++) {
      b.append(i > 0 ? ", " : "").append(quote(cols.get(i).name()));
    }
    b.append("], \"rows\": [");
    boolean first = true;
    try (CloseableIterable<Record> rows = IcebergGenerics.read(table).build()) {
      for (Record r : rows) {
        b.append(first ? "\n[" : ",\n[");
        first = false;
        for (int i = 0; i < cols.size(); i++) {
          Object v = r.getField(cols.get(i).name());
          b.append(i > 0 ? ", " : "");
          if (v == null) {
            b.append("null");
          } else if (v instanceof Number || v instanceof Boolean) {
            b.append(v);
          } else {
            b.append(quote(v.toString()));
          }
        }
        b.append("]");
      }
    }
    b.append("]}\n");
    out.print(b);
    out.flush();
  }

  static String quote(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        b.append('\\').append(c);
      } else if (c < 0x20) {
        b.append(String.format("\\u%04x", (int) c));
      } else {
        b.append(c);
      }
    }
    return b.append('"').toString();
  }
}
