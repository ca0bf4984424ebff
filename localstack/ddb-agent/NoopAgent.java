// Stands in for LocalStack's DynamoDB Local GSI patch agent (downloaded at run time, which fails offline).
// LocalStack always starts DynamoDB Local with -javaagent:<that jar>; an agent that does nothing keeps the JVM happy.
// Cost: DynamoDB Local keeps its own limit of 20 GSIs per table (Cairn's tables use far fewer).
package cairn.localstack;

import java.lang.instrument.Instrumentation;

public final class NoopAgent {
    private NoopAgent() {}

    public static void premain(String args, Instrumentation instrumentation) {}
}
