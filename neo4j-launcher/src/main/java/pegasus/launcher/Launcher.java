package pegasus.launcher;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;

/**
 * Starts a Neo4j Community DBMS with Bolt on 127.0.0.1 and authentication off,
 * and keeps it running until the process is stopped.
 *
 * Usage: Launcher DATA_DIR [PORT]
 */
public final class Launcher {
    private Launcher() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: Launcher DATA_DIR [PORT]");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        int port = args.length > 1 ? Integer.parseInt(args[1]) : 7687;
        Files.createDirectories(home);

        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(GraphDatabaseSettings.auth_enabled, false)
                .setConfig(GraphDatabaseSettings.transaction_timeout, Duration.ofMinutes(10))
                .build();
        // A clean shutdown on SIGTERM keeps the store consistent for the next start.
        Runtime.getRuntime().addShutdownHook(new Thread(dbms::shutdown, "neo4j-shutdown"));
        System.out.println("neo4j ready on bolt://127.0.0.1:" + port + " (data in " + home + ")");
        System.out.flush();
        Thread.currentThread().join();
    }
}
