// `require` consumer: node scenario-cjs.cjs <input>.
const api = require('dsh-session-search');

(async () => {
  const { readInputs } = await import('./inputs.mjs');
  const { runScenario } = await import('./scenario.mjs');
  // PKG_READERS: as in scenario-esm.mjs (helpers reading the logs and building the index).
  const helpers = process.env.PKG_READERS === undefined ? undefined : Number(process.env.PKG_READERS);
  const readers = helpers === undefined ? undefined : { readers: helpers };
  const build = helpers === undefined ? undefined : { builders: helpers, stepBytes: 4096 };
  const calls = await runScenario(api, readInputs(process.argv[2]), readers, build);
  process.stdout.write(JSON.stringify(calls) + '\n');
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
