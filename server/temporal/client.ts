import { Client, Connection } from '@temporalio/client';

export async function connectTemporalClient(address: string, namespace: string): Promise<{ client: Client; close(): Promise<void> }> {
  const connection = await Connection.connect({ address, connectTimeout: '10 seconds' });
  return { client: new Client({ connection, namespace }), close: () => connection.close() };
}
