package pegasus.launcher;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import org.neo4j.server.CommunityBootstrapper;

/**
 * Starts a Neo4j Community server as the server distribution does: Bolt, and HTTP
 * with Neo4j Browser, both on 127.0.0.1, authentication off. Browser opens with
 * Pegasus's style and its saved queries (served by {@link BrowserExtras}).
 * Runs until the process is stopped.
 *
 * Usage: Launcher HOME_DIR [BOLT_PORT] [HTTP_PORT]
 * NEO4J_PAGECACHE sets the page cache (for example 4g); unset, Neo4j sizes it.
 */
public final class Launcher {
    private Launcher() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: Launcher HOME_DIR [BOLT_PORT] [HTTP_PORT]");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        int bolt = args.length > 1 ? Integer.parseInt(args[1]) : 7687;
        int http = args.length > 2 ? Integer.parseInt(args[2]) : 7474;
        Files.createDirectories(home);

        String browserHome = "http://localhost:" + http + BrowserExtras.MOUNT;
        Map<String, String> settings = new HashMap<>();
        settings.put("server.bolt.enabled", "true");
        settings.put("server.bolt.listen_address", "127.0.0.1:" + bolt);
        settings.put("server.http.enabled", "true");
        settings.put("server.http.listen_address", "127.0.0.1:" + http);
        settings.put("server.bolt.advertised_address", "localhost:" + bolt);
        settings.put("server.http.advertised_address", "localhost:" + http);
        settings.put("server.https.enabled", "false");
        settings.put("dbms.security.auth_enabled", "false");
        settings.put("db.transaction.timeout", "10m");
        settings.put("server.unmanaged_extension_classes",
                BrowserExtras.class.getPackageName() + "=" + BrowserExtras.MOUNT);
        // After connecting, Browser loads the style and opens the saved queries
        // (Browser commands, written without their leading colon).
        settings.put("browser.post_connect_cmd",
                "style " + browserHome + "/pegasus.grass; play " + browserHome + "/guide.html");
        String pageCache = System.getenv("NEO4J_PAGECACHE");
        if (pageCache != null && !pageCache.isBlank()) {
            settings.put("server.memory.pagecache.size", pageCache);
        }

        CommunityBootstrapper server = new CommunityBootstrapper();
        int status = server.start(home, settings);
        if (status != 0) {
            System.err.println("neo4j did not start (status " + status + "); see " + home.resolve("logs"));
            System.exit(status);
        }
        // A clean shutdown on SIGTERM keeps the store consistent for the next start.
        Runtime.getRuntime().addShutdownHook(new Thread(server::stop, "neo4j-shutdown"));
        System.out.println("neo4j ready on bolt://127.0.0.1:" + bolt
                + ", Browser on http://localhost:" + http + "/browser/ (data in " + home + ")");
        System.out.flush();
        Thread.currentThread().join();
    }
}
