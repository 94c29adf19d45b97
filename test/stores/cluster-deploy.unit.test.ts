// deploy/cluster (docs/operations.md, "Stateless API nodes"): the compose file and ClickHouse
// configuration agree with what the cluster topology assumes (src/stores/topology.ts). No Docker
// engine runs here; this reads the files: the cluster the service names, 2 shards × 2 replicas
// with internal replication (a Distributed insert writes one replica per shard), a {shard} and
// {replica} macro per node, distinct, and a Keeper of 3 that every node and every Keeper knows.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const dir = path.resolve('deploy/cluster');
const read = (f: string) => fs.readFileSync(path.join(dir, f), 'utf8');
const all = (text: string, re: RegExp) => [...text.matchAll(re)].map((m) => m[1]!);

describe('deploy/cluster', () => {
  const compose = read('docker-compose.yml');
  const cluster = read('clickhouse/cluster.xml');

  it('the API nodes and the worker run the cluster topology on the cluster remote_servers defines', () => {
    expect(compose).toMatch(/CLICKHOUSE_TOPOLOGY: cluster/);
    const name = /CLICKHOUSE_CLUSTER: (\w+)/.exec(compose)![1]!;
    expect(cluster).toContain(`<${name}>`);
    expect(all(compose, /^ {2}(api-\d+):/gm).length).toBeGreaterThanOrEqual(2);
    expect(compose).toMatch(/^ {2}worker:/m);
    expect(compose).toMatch(/JOBS_IN_API: "false"/);
  });

  it('2 shards of 2 replicas, internal replication, one macros file per node with its own shard and replica', () => {
    const shards = all(cluster, /<shard>([\s\S]*?)<\/shard>/g);
    expect(shards).toHaveLength(2);
    const hosts: string[] = [];
    for (const s of shards) {
      expect(s).toContain('<internal_replication>true</internal_replication>');
      const replicas = all(s, /<host>([^<]+)<\/host>/g);
      expect(replicas).toHaveLength(2);
      hosts.push(...replicas);
    }
    const macros = new Set<string>();
    for (const [i, s] of shards.entries())
      for (const host of all(s, /<host>([^<]+)<\/host>/g)) {
        // each node is a service of the compose file, mounting its own macros
        const service = new RegExp(`^ {2}${host}:[\\s\\S]*?macros-(s\\d-r\\d)\\.xml`, 'm').exec(compose);
        expect(service, host).not.toBeNull();
        const m = read(`clickhouse/macros-${service![1]}.xml`);
        expect(/<shard>(\d+)<\/shard>/.exec(m)![1]).toBe(String(i + 1).padStart(2, '0'));
        macros.add(/<replica>([^<]+)<\/replica>/.exec(m)![1]!);
      }
    expect(macros.size).toBe(4);
    expect(new Set(hosts).size).toBe(4);
  });

  it('a Keeper of 3 nodes, each knowing the other two, and every ClickHouse node knowing the three', () => {
    const keepers = all(cluster, /<node><host>([^<]+)<\/host>/g);
    expect(keepers).toEqual(['keeper-1', 'keeper-2', 'keeper-3']);
    for (const [i, k] of keepers.entries()) {
      expect(compose).toMatch(new RegExp(`^ {2}${k}:`, 'm'));
      const conf = read(`keeper/${k}.xml`);
      expect(conf).toContain(`<server_id>${i + 1}</server_id>`);
      expect(all(conf, /<hostname>([^<]+)<\/hostname>/g)).toEqual(keepers);
    }
  });
});
