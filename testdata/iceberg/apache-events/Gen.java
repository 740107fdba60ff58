// Prints a START_COMMIT event of the Apache Iceberg sink for the consumer group args[0], as its control topic
// carries it (base64): the golden file of the Go sink's check for Apache events on its control topic.
import java.util.Base64;
import java.util.UUID;
import org.apache.iceberg.connect.events.AvroUtil;
import org.apache.iceberg.connect.events.Event;
import org.apache.iceberg.connect.events.StartCommit;

public class Gen {
  public static void main(String[] args) throws Exception {
    Event e = new Event(args[0], new StartCommit(UUID.fromString("6f1c7a1e-1111-4222-8333-944455556666")));
    System.out.println(Base64.getEncoder().encodeToString(AvroUtil.encode(e)));
  }
}
