package connectd;

import org.apache.kafka.connect.runtime.distributed.ConnectProtocol;
import org.apache.kafka.connect.runtime.distributed.ExtendedAssignment;
import org.apache.kafka.connect.runtime.distributed.ExtendedWorkerState;
import org.apache.kafka.connect.runtime.distributed.IncrementalCooperativeConnectProtocol;
import org.apache.kafka.connect.util.ConnectorTaskId;

import java.nio.ByteBuffer;
import java.util.List;

/** Prints "name hex" lines: Connect group protocol messages serialized by the JVM's own classes. */
public class GoldenGen {
    static String hex(ByteBuffer b) {
        StringBuilder sb = new StringBuilder();
        ByteBuffer d = b.duplicate();
        while (d.hasRemaining()) sb.append(String.format("%02x", d.get()));
        return sb.toString();
    }

    static void out(String name, ByteBuffer b) { System.out.println(name + " " + hex(b)); }

    public static void main(String[] args) {
        String url = "http://127.0.0.1:8083/";
        out("metadata_v0", ConnectProtocol.serializeMetadata(new ConnectProtocol.WorkerState(url, 42)));
        out("metadata_v0_nooffset", ConnectProtocol.serializeMetadata(new ConnectProtocol.WorkerState(url, -1)));

        ExtendedAssignment cur = new ExtendedAssignment((short) 1, (short) 0, "leader-1", "http://l:8083/", 7,
                List.of("a"), List.of(new ConnectorTaskId("a", 0), new ConnectorTaskId("a", 1), new ConnectorTaskId("b", 2)),
                List.of(), List.of(), 0);
        out("metadata_v1_empty", IncrementalCooperativeConnectProtocol.serializeMetadata(new ExtendedWorkerState(url, 42, null), false));
        out("metadata_v2_empty", IncrementalCooperativeConnectProtocol.serializeMetadata(new ExtendedWorkerState(url, 42, null), true));
        out("metadata_v1_alloc", IncrementalCooperativeConnectProtocol.serializeMetadata(new ExtendedWorkerState(url, 42, cur), false));
        out("metadata_v2_alloc", IncrementalCooperativeConnectProtocol.serializeMetadata(new ExtendedWorkerState(url, 42, cur), true));

        out("assignment_v0", ConnectProtocol.serializeAssignment(new ConnectProtocol.Assignment((short) 0, "leader-1",
                "http://l:8083/", 7, List.of("a"), List.of(new ConnectorTaskId("a", 0), new ConnectorTaskId("b", 1)))));
        out("assignment_v0_mismatch", ConnectProtocol.serializeAssignment(new ConnectProtocol.Assignment((short) 1, "leader-1",
                "http://l:8083/", 9, List.of(), List.of())));
        ExtendedAssignment inc = new ExtendedAssignment((short) 1, (short) 0, "leader-1", "http://l:8083/", 7,
                List.of("a"), List.of(new ConnectorTaskId("a", 0), new ConnectorTaskId("b", 1)),
                List.of("c"), List.of(new ConnectorTaskId("c", 3)), 15000);
        out("assignment_v1", IncrementalCooperativeConnectProtocol.serializeAssignment(inc, false));
        out("assignment_v2", IncrementalCooperativeConnectProtocol.serializeAssignment(inc, true));
        ExtendedAssignment none = new ExtendedAssignment((short) 2, (short) 0, "leader-1", "http://l:8083/", 7,
                List.of(), List.of(), List.of(), List.of(), 0);
        out("assignment_v2_nothing", IncrementalCooperativeConnectProtocol.serializeAssignment(none, true));
    }
}
