import com.sun.net.httpserver.HttpServer;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;

/** A tiny service for deploy tests: reports what reached it (path, identity headers, env, instance). */
public class HelloServer {
  static int port() throws Exception {
    String fromEnv = System.getenv("SERVER_PORT");
    if (fromEnv != null && !fromEnv.isEmpty()) return Integer.parseInt(fromEnv);
    for (String name : new String[] {"/application.properties", "/application.yml"}) {
      try (InputStream in = HelloServer.class.getResourceAsStream(name)) {
        if (in == null) continue;
        for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
          String t = line.trim();
          if (t.startsWith("server.port=")) return Integer.parseInt(t.substring("server.port=".length()).trim());
          if (t.startsWith("port:")) return Integer.parseInt(t.substring("port:".length()).trim());
        }
      }
    }
    return 8080;
  }

  static String q(String value) {
    return value == null ? "null" : "\"" + value.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }

  public static void main(String[] args) throws Exception {
    // As Tomcat and Netty do by default: without it a kept-alive connection waits on delayed ACKs.
    System.setProperty("sun.net.httpserver.nodelay", "true");
    int port = port();
    String delay = System.getenv("START_DELAY_MS");
    if (delay != null && !delay.isEmpty()) {
      System.out.println("hello-server waiting " + delay + " ms before listening");
      Thread.sleep(Long.parseLong(delay));
    }
    String instance = InetAddress.getLocalHost().getHostName();
    HttpServer server = HttpServer.create(new InetSocketAddress(port), 64);
    server.setExecutor(Executors.newFixedThreadPool(8));
    // FAIL_EVERY=n: every n-th request (health checks aside) answers 500, as a version that is healthy but wrong.
    String failEveryEnv = System.getenv("FAIL_EVERY");
    int failEvery = failEveryEnv == null || failEveryEnv.isEmpty() ? 0 : Integer.parseInt(failEveryEnv);
    java.util.concurrent.atomic.AtomicLong served = new java.util.concurrent.atomic.AtomicLong();
    // /allocate/{mb} holds on to that many MiB, every page touched: a service that outgrows its memory limit.
    java.util.List<byte[]> held = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
    // /sick makes the health check at /checkup answer 503 until /well: a running instance that turns unhealthy.
    java.util.concurrent.atomic.AtomicBoolean sick = new java.util.concurrent.atomic.AtomicBoolean();
    server.createContext("/", exchange -> {
      byte[] body = exchange.getRequestBody().readAllBytes();
      String path = exchange.getRequestURI().toString();
      if (path.equals("/sick")) sick.set(true);
      if (path.equals("/well")) sick.set(false);
      if (path.startsWith("/allocate/")) {
        int megabytes = Integer.parseInt(path.substring("/allocate/".length()));
        for (int i = 0; i < megabytes; i++) {
          byte[] block = new byte[1024 * 1024];
          for (int at = 0; at < block.length; at += 4096) block[at] = 1;
          held.add(block);
        }
      }
      String json = path.equals("/actuator/health")
          ? "{\"status\":\"UP\"}"
          : "{\"path\":" + q(path)
              + ",\"method\":" + q(exchange.getRequestMethod())
              + ",\"userId\":" + q(exchange.getRequestHeaders().getFirst("X-User-Id"))
              + ",\"userRoles\":" + q(exchange.getRequestHeaders().getFirst("X-User-Roles"))
              + ",\"authorization\":" + q(exchange.getRequestHeaders().getFirst("Authorization"))
              + ",\"forwarded\":" + q(exchange.getRequestHeaders().getFirst("Forwarded"))
              + ",\"forwardedFor\":" + q(exchange.getRequestHeaders().getFirst("X-Forwarded-For"))
              + ",\"realIp\":" + q(exchange.getRequestHeaders().getFirst("X-Real-IP"))
              + ",\"hopByHop\":" + q(exchange.getRequestHeaders().getFirst("X-Hop-Secret"))
              + ",\"greeting\":" + q(System.getenv("GREETING"))
              + ",\"version\":" + q(System.getenv("VERSION"))
              + ",\"instance\":" + q(instance)
              + ",\"bodyBytes\":" + body.length + "}";
      // /status/{code} answers with that status, to show that the gateway relays a service's own errors.
      int status = path.startsWith("/status/") ? Integer.parseInt(path.substring("/status/".length())) : 200;
      if (failEvery > 0 && !path.equals("/actuator/health") && served.incrementAndGet() % failEvery == 0) status = 500;
      if (path.equals("/checkup") && sick.get()) status = 503;
      byte[] out = json.getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "application/json");
      exchange.getResponseHeaders().set("X-Hello-Instance", instance);
      exchange.sendResponseHeaders(status, out.length);
      exchange.getResponseBody().write(out);
      exchange.close();
    });
    server.start();
    System.out.println("hello-server " + instance + " listening on " + port + " greeting=" + System.getenv("GREETING") + " secret=" + System.getenv("DB_PASSWORD") + " db=" + System.getenv("DATABASE_URL"));
  }
}
