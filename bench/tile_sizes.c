/*
 * Tile sizes for the tile pass (docs/decisions.md): the loops the pass
 * makes of the naive float32 transpose, one thread, T = 8, 16, 32, 64
 * against the untiled loop (T = 0), rounds interleaved, medians of 9.
 *
 *   cc -O3 -march=native bench/tile_sizes.c -o /tmp/tile_sizes
 *   /tmp/tile_sizes 4096; /tmp/tile_sizes 4100; /tmp/tile_sizes 2048
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
__attribute__((noinline)) void tiled(const float*restrict a,float*restrict b,long n,long m,long T){
 for(long i0=0;i0<n;i0+=T){long i1=i0+(n-i0<T?n-i0:T);
  for(long j0=0;j0<m;j0+=T){long j1=j0+(m-j0<T?m-j0:T);
   for(long i=i0;i<i1;i++)for(long j=j0;j<j1;j++)b[j*n+i]=a[i*m+j];}}}
static int cmp(const void*x,const void*y){double a=*(double*)x,b=*(double*)y;return a<b?-1:a>b;}
int main(int argc,char**argv){long n=atol(argv[1]),m=n;float*a=aligned_alloc(64,n*m*4),*b=aligned_alloc(64,n*m*4);
for(long k=0;k<n*m;k++)a[k]=k,b[k]=0;
long Ts[]={4096*4096,8,16,32,64};enum{NT=5,R=9};double t[NT][R];
for(int r=0;r<R;r++)for(int q=0;q<NT;q++){double s=now();tiled(a,b,n,m,Ts[q]);t[q][r]=now()-s;}
printf("n=%ld:",n);for(int q=0;q<NT;q++){qsort(t[q],R,sizeof(double),cmp);printf(" T=%ld %.1f ms;",q?Ts[q]:0,t[q][R/2]*1e3);}printf("\n");}
