/** A service that runs but never opens its port. */
public class NeverHealthy {
  public static void main(String[] args) throws Exception {
    System.out.println("warming up forever");
    Thread.sleep(Long.MAX_VALUE);
  }
}
