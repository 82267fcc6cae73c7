/* TEMPORARY placeholder */
#ifndef CD_H
#define CD_H
#endif
