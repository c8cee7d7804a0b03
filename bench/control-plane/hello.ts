// The baseline: a bare uWebSockets.js hello-world on the same machine and core as the server.
import uWS from 'uWebSockets.js';

const port = Number(process.argv[2] ?? 0);
uWS
  .App()
  .any('/*', (res) => {
    res.end('Hello World!');
  })
  .listen('127.0.0.1', port, (socket) => {
    if (!socket) {
      process.stderr.write(`hello: cannot listen on ${port}\n`);
      process.exit(1);
    }
    process.stdout.write(`listening ${uWS.us_socket_local_port(socket as never)}\n`);
  });
