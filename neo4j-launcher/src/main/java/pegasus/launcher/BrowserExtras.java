package pegasus.launcher;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import javax.ws.rs.GET;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Response;

/**
 * What Browser needs to show a Pegasus memory, served beside it by the Neo4j server:
 * the style ({@code browser/pegasus.grass}) and a guide whose slides are the saved
 * queries of {@code cypher/browser/}, each one click from the editor.
 */
@javax.ws.rs.Path("")
public class BrowserExtras {
    static final String MOUNT = "/pegasus";

    @GET
    @javax.ws.rs.Path("pegasus.grass")
    @Produces("text/plain; charset=utf-8")
    public Response style() {
        return allowBrowser(Response.ok(resource("pegasus/pegasus.grass")));
    }

    @GET
    @javax.ws.rs.Path("guide.html")
    @Produces("text/html; charset=utf-8")
    public Response guide() {
        return allowBrowser(Response.ok(Guide.render(savedQueries())));
    }

    // Browser fetches guides and styles with a cross-origin request when it is
    // opened on another host name than the one it connects to.
    private static Response allowBrowser(Response.ResponseBuilder response) {
        return response.header("Access-Control-Allow-Origin", "*").build();
    }

    private static String resource(String name) {
        try (InputStream in = BrowserExtras.class.getClassLoader().getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The saved queries, by file name; the launcher runs from its classes folder. */
    static List<Guide.Query> savedQueries() {
        URL folder = BrowserExtras.class.getClassLoader().getResource("pegasus/queries");
        if (folder == null) {
            throw new IllegalStateException("missing resource folder pegasus/queries");
        }
        try (Stream<Path> files = Files.list(Path.of(folder.toURI()))) {
            return files.filter(f -> f.toString().endsWith(".cypher"))
                    .sorted()
                    .map(BrowserExtras::readQuery)
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Guide.Query readQuery(Path file) {
        try {
            String name = file.getFileName().toString().replace(".cypher", "");
            return new Guide.Query(name, Files.readString(file));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
