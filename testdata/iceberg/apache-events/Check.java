// Decodes base64 control events, one a line on stdin, with the Apache Iceberg sink's own classes and prints
// what Dump prints of each (or "error=..."), base64 in one line: the Java side of the Go encoder's test
// (connectors/iceberg/apacheevents).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.apache.iceberg.connect.events.AvroUtil;

public class Check {
  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
    for (String line; (line = in.readLine()) != null; ) {
      if (line.isBlank()) {
        continue;
      }
      String out;
      try {
        out = Dump.dump(AvroUtil.decode(Base64.getDecoder().decode(line.trim())));
      } catch (Exception e) {
        out = "error=" + e + "\n";
      }
      System.out.println(Base64.getEncoder().encodeToString(out.getBytes(StandardCharsets.UTF_8)));
    }
  }
}
