// Writes the golden control events of the Apache Iceberg sink into the directory args[0], as its control
// topic carries them (NAME.b64, base64) and as Dump prints them decoded (NAME.txt): one event of every
// payload type, written by the sink's own classes (iceberg-kafka-connect-events 1.10.1). Event ids and
// timestamps are fixed so that a rerun writes the same bytes.
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileMetadata;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.PartitionData;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.connect.events.AvroUtil;
import org.apache.iceberg.connect.events.CommitComplete;
import org.apache.iceberg.connect.events.CommitToTable;
import org.apache.iceberg.connect.events.DataComplete;
import org.apache.iceberg.connect.events.DataWritten;
import org.apache.iceberg.connect.events.Event;
import org.apache.iceberg.connect.events.Payload;
import org.apache.iceberg.connect.events.StartCommit;
import org.apache.iceberg.connect.events.TableReference;
import org.apache.iceberg.connect.events.TopicPartitionOffset;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.DateTimeUtil;

import static org.apache.iceberg.types.Types.NestedField.optional;
import static org.apache.iceberg.types.Types.NestedField.required;

@SuppressWarnings("unchecked")
public class Gen {
  static final String GROUP = "connect-cdc-golden";
  static final UUID COMMIT = UUID.fromString("6f1c7a1e-1111-4222-8333-944455556666");
  static final long TS = 1709600000123456L; // 2024-03-05T00:53:20.123456Z
  static Path dir;
  static int seq;

  public static void main(String[] args) throws Exception {
    dir = Paths.get(args[0]);
    write("start-commit", new StartCommit(COMMIT));
    writeDataWritten();
    write(
        "data-complete",
        new DataComplete(
            COMMIT,
            Arrays.asList(
                new TopicPartitionOffset("topic-a", 0, 42L, DateTimeUtil.timestamptzFromMicros(TS - 5)),
                new TopicPartitionOffset("topic-a", 1, null, null),
                new TopicPartitionOffset("topic-b", 2, 0L, null),
                new TopicPartitionOffset("topic-b", 3, null, DateTimeUtil.timestamptzFromMicros(-1L)))));
    write("data-complete-null", new DataComplete(COMMIT, null));
    TableReference orders = TableReference.of("prod", TableIdentifier.of(Namespace.of("db", "sales"), "orders"));
    write(
        "commit-to-table",
        new CommitToTable(COMMIT, orders, 8123456789012345678L, DateTimeUtil.timestamptzFromMicros(TS - 1000)));
    write(
        "commit-to-table-null",
        new CommitToTable(COMMIT, TableReference.of("c", TableIdentifier.of(Namespace.empty(), "t")), null, null));
    write("commit-complete", new CommitComplete(COMMIT, DateTimeUtil.timestamptzFromMicros(TS - 2000)));
    write("commit-complete-null", new CommitComplete(COMMIT, null));
  }

  static void write(String name, Payload p) throws Exception {
    Event e = new Event(GROUP, p);
    seq++;
    e.put(0, UUID.fromString(String.format("00000000-0000-4000-8000-%012d", seq)));
    e.put(2, TS + seq);
    byte[] b = AvroUtil.encode(e);
    Files.write(dir.resolve(name + ".b64"), (Base64.getEncoder().encodeToString(b) + "\n").getBytes(StandardCharsets.UTF_8));
    Files.write(dir.resolve(name + ".txt"), Dump.dump(AvroUtil.decode(b)).getBytes(StandardCharsets.UTF_8));
  }

  // Maps in key order, as a HashMap of small column ids iterates (Map.of's order is arbitrary).
  static <V> Map<Integer, V> tm(Object... kv) {
    Map<Integer, V> m = new TreeMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put((Integer) kv[i], (V) kv[i + 1]);
    }
    return m;
  }

  static ByteBuffer le(long v) {
    return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, v);
  }

  static ByteBuffer utf8(String s) {
    return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
  }

  static void writeDataWritten() throws Exception {
    Schema schema =
        new Schema(
            required(1, "id", Types.LongType.get()),
            optional(2, "name", Types.StringType.get()),
            optional(3, "ts", Types.TimestampType.withZone()),
            optional(4, "amount", Types.DecimalType.of(10, 2)));
    TableReference orders = TableReference.of("prod", TableIdentifier.of(Namespace.of("db", "sales"), "orders"));
    Metrics metrics =
        new Metrics(
            100L,
            tm(1, 800L, 2, 1200L, 3, 640L),
            tm(1, 100L, 2, 100L, 3, 100L),
            tm(1, 0L, 2, 3L, 3, 1L),
            tm(),
            tm(1, le(1), 2, utf8("alice"), 3, le(TS - 86_400_000_000L)),
            tm(1, le(100), 2, utf8("zoe"), 3, le(TS)));
    SortOrder sort = SortOrder.builderFor(schema).withOrderId(1).asc("id").build();

    PartitionSpec unpart = PartitionSpec.unpartitioned();
    DataFile plain =
        DataFiles.builder(unpart)
            .withPath("s3://bucket/db/orders/data/00000-0-plain.parquet")
            .withFormat(FileFormat.PARQUET)
            .withFileSizeInBytes(4096)
            .withMetrics(metrics)
            .withSplitOffsets(List.of(4L, 2048L))
            .withSortOrder(sort)
            .withEncryptionKeyMetadata(ByteBuffer.wrap(new byte[] {1, 2, 3}))
            .withFirstRowId(1000L)
            .build();
    write("data-written-unpartitioned", new DataWritten(unpart.partitionType(), COMMIT, orders, List.of(plain), List.of()));
    write("data-written-null", new DataWritten(unpart.partitionType(), COMMIT, orders, null, null));

    PartitionSpec spec = PartitionSpec.builderFor(schema).withSpecId(2).identity("name").day("ts").build();
    PartitionData alice = new PartitionData(spec.partitionType());
    alice.set(0, "alice");
    alice.set(1, 19787); // 2024-03-05
    PartitionData nulls = new PartitionData(spec.partitionType());
    DataFile a =
        DataFiles.builder(spec)
            .withPath("s3://bucket/db/orders/data/name=alice/ts_day=2024-03-05/00000-1-a.parquet")
            .withFormat(FileFormat.PARQUET)
            .withPartition(alice)
            .withFileSizeInBytes(8192)
            .withMetrics(metrics)
            .withSplitOffsets(List.of(4L))
            .build();
    DataFile b =
        DataFiles.builder(spec)
            .withPath("s3://bucket/db/orders/data/name=null/ts_day=null/00000-1-b.avro")
            .withFormat(FileFormat.AVRO)
            .withPartition(nulls)
            .withFileSizeInBytes(512)
            .withRecordCount(7)
            .build();
    DeleteFile eq =
        FileMetadata.deleteFileBuilder(spec)
            .ofEqualityDeletes(1, 2)
            .withPath("s3://bucket/db/orders/data/name=alice/ts_day=2024-03-05/00000-1-eq.parquet")
            .withFormat(FileFormat.PARQUET)
            .withPartition(alice)
            .withFileSizeInBytes(300)
            .withMetrics(new Metrics(3L, tm(1, 30L), tm(1, 3L), tm(1, 0L), null, tm(1, le(5)), tm(1, le(9))))
            .withSortOrder(sort)
            .build();
    DeleteFile dv =
        FileMetadata.deleteFileBuilder(spec)
            .ofPositionDeletes()
            .withPath("s3://bucket/db/orders/data/name=alice/ts_day=2024-03-05/00000-1-dv.puffin")
            .withFormat(FileFormat.PUFFIN)
            .withPartition(alice)
            .withFileSizeInBytes(120)
            .withRecordCount(2)
            .withReferencedDataFile(a.location())
            .withContentOffset(4)
            .withContentSizeInBytes(40)
            .build();
    write("data-written-partitioned", new DataWritten(spec.partitionType(), COMMIT, orders, List.of(a, b), List.of(eq, dv)));

    writeTypes();
  }

  // One partition field of every transform result type, and names that Avro cannot take as they are.
  static void writeTypes() throws Exception {
    Schema schema =
        new Schema(
            required(1, "b", Types.BooleanType.get()),
            required(2, "i", Types.IntegerType.get()),
            required(3, "l", Types.LongType.get()),
            required(4, "f", Types.FloatType.get()),
            required(5, "d", Types.DoubleType.get()),
            required(6, "dt", Types.DateType.get()),
            required(7, "t", Types.TimeType.get()),
            required(8, "ts", Types.TimestampType.withoutZone()),
            required(9, "tstz", Types.TimestampType.withZone()),
            required(10, "s", Types.StringType.get()),
            required(11, "u", Types.UUIDType.get()),
            required(12, "fx", Types.FixedType.ofLength(3)),
            required(13, "bin", Types.BinaryType.get()),
            required(14, "dec", Types.DecimalType.of(9, 2)),
            required(15, "dec38", Types.DecimalType.of(38, 10)),
            required(16, "tsns", Types.TimestampNanoType.withZone()),
            required(17, "näme 1", Types.StringType.get()),
            required(18, "s\uD83D\uDE00", Types.StringType.get()),
            required(19, "tstz2", Types.TimestampType.withZone()));
    PartitionSpec spec =
        PartitionSpec.builderFor(schema)
            .withSpecId(7)
            .identity("b").identity("i").identity("l").identity("f").identity("d").identity("dt")
            .identity("t").identity("ts").identity("tstz").identity("s").identity("u").identity("fx")
            .identity("bin").identity("dec").identity("dec38").identity("tsns").identity("näme 1")
            .identity("s\uD83D\uDE00")
            .bucket("l", 16).truncate("s", 4).year("ts").month("tstz").hour("tstz2")
            .build();
    Types.StructType pt = spec.partitionType();
    Object[] values = {
      true, -7, 1L << 40, 1.5f, -2.25d, 19787, 3_600_000_000L, TS, TS, "héllo \u0000 😀",
      UUID.fromString("123e4567-e89b-42d3-a456-426614174000"), null /* the sink cannot write a fixed partition value */,
      ByteBuffer.wrap(new byte[] {(byte) 0xff, 0, 7}), new BigDecimal("-1234567.89"),
      new BigDecimal("1234567890123456789012345678.0123456789"), TS * 1000 + 789, "x", "y",
      5, "héll", 54, 650, 474889
    };
    List<DataFile> files = new ArrayList<>();
    PartitionData full = new PartitionData(pt);
    for (int i = 0; i < values.length; i++) {
      full.set(i, values[i]);
    }
    files.add(
        DataFiles.builder(spec)
            .withPath("s3://bucket/t/full.parquet")
            .withFormat(FileFormat.PARQUET)
            .withPartition(full)
            .withFileSizeInBytes(10)
            .withRecordCount(1)
            .build());
    files.add(
        DataFiles.builder(spec)
            .withPath("s3://bucket/t/nulls.orc")
            .withFormat(FileFormat.ORC)
            .withPartition(new PartitionData(pt))
            .withFileSizeInBytes(11)
            .withRecordCount(2)
            .build());
    write(
        "data-written-types",
        new DataWritten(pt, COMMIT, TableReference.of("prod", TableIdentifier.of(Namespace.of("db"), "types")), files, null));
  }
}
