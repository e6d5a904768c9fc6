/** A service that dies at start, as a misconfigured one does. */
public class ExitAtStart {
  public static void main(String[] args) {
    System.out.println("starting exit-at-start");
    System.err.println("fatal: no database configured, giving up");
    System.exit(3);
  }
}
