// Prints every field of a decoded control event, one "key=value" line each, in a form the Go tests of
// connectors/iceberg/apacheevents print too: the golden *.txt files and the Java side of the Go encoder's check.
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.PartitionData;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.connect.events.CommitComplete;
import org.apache.iceberg.connect.events.CommitToTable;
import org.apache.iceberg.connect.events.DataComplete;
import org.apache.iceberg.connect.events.DataWritten;
import org.apache.iceberg.connect.events.Event;
import org.apache.iceberg.connect.events.StartCommit;
import org.apache.iceberg.connect.events.TableReference;
import org.apache.iceberg.connect.events.TopicPartitionOffset;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.DateTimeUtil;

public class Dump {
  public static String dump(Event e) throws Exception {
    List<String> out = new ArrayList<>();
    out.add("id=" + e.id());
    out.add("type=" + e.type().id());
    out.add("timestamp=" + DateTimeUtil.microsFromTimestamptz(e.timestamp()));
    out.add("group_id=" + e.groupId());
    out.add("payload=" + e.payload().getClass().getName());
    Object p = e.payload();
    if (p instanceof StartCommit) {
      out.add("commit_id=" + ((StartCommit) p).commitId());
    } else if (p instanceof DataWritten) {
      DataWritten d = (DataWritten) p;
      out.add("commit_id=" + d.commitId());
      out.add("table=" + table(d.tableReference()));
      files(out, "data_files", d.dataFiles());
      files(out, "delete_files", d.deleteFiles());
    } else if (p instanceof DataComplete) {
      DataComplete d = (DataComplete) p;
      out.add("commit_id=" + d.commitId());
      if (d.assignments() == null) {
        out.add("assignments=null");
      } else {
        out.add("assignments=" + d.assignments().size());
        for (int i = 0; i < d.assignments().size(); i++) {
          TopicPartitionOffset t = d.assignments().get(i);
          out.add(
              "assignments["
                  + i
                  + "]="
                  + t.topic()
                  + "|"
                  + t.partition()
                  + "|"
                  + t.offset()
                  + "|"
                  + (t.timestamp() == null ? "null" : DateTimeUtil.microsFromTimestamptz(t.timestamp())));
        }
      }
    } else if (p instanceof CommitToTable) {
      CommitToTable c = (CommitToTable) p;
      out.add("commit_id=" + c.commitId());
      out.add("table=" + table(c.tableReference()));
      out.add("snapshot_id=" + c.snapshotId());
      out.add("valid_through_ts=" + micros(c.validThroughTs()));
    } else if (p instanceof CommitComplete) {
      CommitComplete c = (CommitComplete) p;
      out.add("commit_id=" + c.commitId());
      out.add("valid_through_ts=" + micros(c.validThroughTs()));
    }
    return String.join("\n", out) + "\n";
  }

  static String micros(java.time.OffsetDateTime t) {
    return t == null ? "null" : String.valueOf(DateTimeUtil.microsFromTimestamptz(t));
  }

  static String table(TableReference t) {
    return t.catalog() + "|" + String.join(".", t.identifier().namespace().levels()) + "|" + t.identifier().name();
  }

  static void files(List<String> out, String key, List<? extends ContentFile<?>> files) throws Exception {
    if (files == null) {
      out.add(key + "=null");
      return;
    }
    out.add(key + "=" + files.size());
    for (int i = 0; i < files.size(); i++) {
      ContentFile<?> f = files.get(i);
      String k = key + "[" + i + "].";
      out.add(k + "class=" + f.getClass().getName());
      out.add(k + "content=" + f.content().id());
      out.add(k + "file_path=" + f.location());
      out.add(k + "file_format=" + f.format().name());
      out.add(k + "spec_id=" + f.specId());
      partition(out, k + "partition", f.partition());
      out.add(k + "record_count=" + f.recordCount());
      out.add(k + "file_size_in_bytes=" + f.fileSizeInBytes());
      out.add(k + "column_sizes=" + longs(f.columnSizes()));
      out.add(k + "value_counts=" + longs(f.valueCounts()));
      out.add(k + "null_value_counts=" + longs(f.nullValueCounts()));
      out.add(k + "nan_value_counts=" + longs(f.nanValueCounts()));
      out.add(k + "lower_bounds=" + bufs(f.lowerBounds()));
      out.add(k + "upper_bounds=" + bufs(f.upperBounds()));
      out.add(k + "key_metadata=" + (f.keyMetadata() == null ? "null" : hex(f.keyMetadata())));
      out.add(k + "split_offsets=" + f.splitOffsets());
      out.add(k + "equality_ids=" + f.equalityFieldIds());
      out.add(k + "sort_order_id=" + f.sortOrderId());
      out.add(k + "first_row_id=" + f.firstRowId());
      out.add(k + "referenced_data_file=" + call(f, "referencedDataFile"));
      out.add(k + "content_offset=" + call(f, "contentOffset"));
      out.add(k + "content_size_in_bytes=" + call(f, "contentSizeInBytes"));
    }
  }

  // The v3 fields are on the Java files' base class, which DataFile's interface does not expose.
  static Object call(Object o, String name) throws Exception {
    for (Class<?> c = o.getClass(); c != null; c = c.getSuperclass()) {
      try {
        Method m = c.getDeclaredMethod(name);
        m.setAccessible(true);
        return m.invoke(o);
      } catch (NoSuchMethodException e) {
        // look in the superclass
      }
    }
    throw new NoSuchMethodException(name);
  }

  static void partition(List<String> out, String key, StructLike s) {
    if (!(s instanceof PartitionData)) {
      out.add(key + "=" + (s == null ? "null" : s.getClass().getName()));
      return;
    }
    PartitionData pd = (PartitionData) s;
    List<Types.NestedField> fields = pd.getPartitionType().fields();
    out.add(key + "=" + fields.size());
    for (int i = 0; i < fields.size(); i++) {
      Types.NestedField f = fields.get(i);
      Object v = pd.get(i);
      String val;
      if (v == null) {
        val = "null";
      } else if (v instanceof ByteBuffer) {
        val = "ByteBuffer:" + hex((ByteBuffer) v);
      } else if (v instanceof org.apache.avro.generic.GenericData.Fixed) {
        val = "Fixed:" + hex(ByteBuffer.wrap(((org.apache.avro.generic.GenericData.Fixed) v).bytes()));
      } else if (v instanceof java.math.BigDecimal) {
        val = "BigDecimal:" + ((java.math.BigDecimal) v).toPlainString();
      } else {
        val = v.getClass().getSimpleName() + ":" + esc(v.toString());
      }
      out.add(key + "[" + i + "]=" + f.fieldId() + "|" + f.name() + "|" + f.type() + "|" + (f.isOptional() ? "optional" : "required") + "|" + val);
    }
  }

  // Control characters are escaped so that the golden files stay text.
  static String esc(String s) {
    StringBuilder sb = new StringBuilder();
    for (char c : s.toCharArray()) {
      if (c < 0x20 || c == '\\') {
        sb.append(String.format("\\u%04x", (int) c));
      } else {
        sb.append(c);
      }
    }
    return sb.toString();
  }

  static String longs(Map<Integer, Long> m) {
    return m == null ? "null" : new TreeMap<>(m).toString();
  }

  static String bufs(Map<Integer, ByteBuffer> m) {
    if (m == null) {
      return "null";
    }
    TreeMap<Integer, String> t = new TreeMap<>();
    m.forEach((k, v) -> t.put(k, hex(v)));
    return t.toString();
  }

  static String hex(ByteBuffer b) {
    StringBuilder sb = new StringBuilder();
    ByteBuffer d = b.duplicate();
    while (d.hasRemaining()) {
      sb.append(String.format("%02x", d.get()));
    }
    return sb.toString();
  }
}
