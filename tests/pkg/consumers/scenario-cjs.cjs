// `require` consumer: node scenario-cjs.cjs <input>.
const api = require('dsh-session-search');

(async () => {
  const { readInputs } = await import('./inputs.mjs');
  const { runScenario } = await import('./scenario.mjs');
  // PKG_READERS: the load's `readers` (helper threads reading its logs); unset, the default.
  const readers = process.env.PKG_READERS === undefined ? undefined : { readers: Number(process.env.PKG_READERS) };
  const calls = await runScenario(api, readInputs(process.argv[2]), readers);
  process.stdout.write(JSON.stringify(calls) + '\n');
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
