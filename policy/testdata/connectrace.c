// connectrace: races a connect (or a sendto) whose address another thread
// rewrites, to check that the sandbox's supervisor acts on the address it
// checked. Built and run by TestSupervisorActsOnTheCheckedAddress.
//
//   connectrace MODE TARGET [PORT|NAME|PATH] N
//
// MODE inet, abstract or path: the benign address is 127.0.0.1:PORT, the
// abstract socket NAME, or the pathname socket PATH (which the sandbox
// may reach); thread 2 flips the shared address between it and the
// pathname socket TARGET (outside the sandbox) while thread 1 connects a
// fresh AF_UNIX stream socket N times. MODE dgram is like path, but
// thread 1 sends a datagram with sendto from a fresh AF_UNIX datagram
// socket. It prints how many attempts succeeded.
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static union {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_un un;
} shared, benign, target;

static atomic_int stop;

static void *flipper(void *arg) {
	(void)arg;
	while (!atomic_load(&stop)) {
		memcpy((void *)&shared, &target, sizeof shared);
		__asm__ volatile("" ::: "memory"); // both copies happen
		memcpy((void *)&shared, &benign, sizeof shared);
		__asm__ volatile("" ::: "memory");
	}
	return NULL;
}

int main(int argc, char **argv) {
	if (argc != 5) {
		fprintf(stderr, "usage: connectrace MODE TARGET ARG N\n");
		return 2;
	}
	const char *mode = argv[1];
	int n = atoi(argv[4]);
	target.un.sun_family = AF_UNIX;
	strncpy(target.un.sun_path, argv[2], sizeof target.un.sun_path - 1);
	if (strcmp(mode, "inet") == 0) {
		benign.in.sin_family = AF_INET;
		benign.in.sin_port = htons(atoi(argv[3]));
		benign.in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	} else if (strcmp(mode, "abstract") == 0) {
		benign.un.sun_family = AF_UNIX;
		strncpy(benign.un.sun_path + 1, argv[3], sizeof benign.un.sun_path - 2);
	} else {
		benign.un.sun_family = AF_UNIX;
		strncpy(benign.un.sun_path, argv[3], sizeof benign.un.sun_path - 1);
	}
	memcpy(&shared, &benign, sizeof shared);
	pthread_t t;
	if (pthread_create(&t, NULL, flipper, NULL) != 0) {
		perror("pthread_create");
		return 2;
	}
	int ok = 0, errs[256] = {0};
	for (int i = 0; i < n; i++) {
		if (strcmp(mode, "dgram") == 0) {
			int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
			if (fd < 0) {
				perror("socket");
				return 2;
			}
			if (sendto(fd, "x", 1, 0, (struct sockaddr *)&shared, sizeof(struct sockaddr_un)) == 1)
				ok++;
			else if (errno < 256)
				errs[errno]++;
			close(fd);
			continue;
		}
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (fd < 0) {
			perror("socket");
			return 2;
		}
		if (connect(fd, (struct sockaddr *)&shared, sizeof(struct sockaddr_un)) == 0)
			ok++;
		else if (errno < 256)
			errs[errno]++;
		close(fd);
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	printf("%d of %d", ok, n);
	for (int e = 0; e < 256; e++)
		if (errs[e])
			printf(", errno %d: %d", e, errs[e]);
	printf("\n");
	return 0;
}
